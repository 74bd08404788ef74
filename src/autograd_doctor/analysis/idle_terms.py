"""AD211: a term of the backpropagated loss trains nothing that steps. Its gradient reaches only
parameters that no optimizer steps before they are cleared (a generator's adversarial term
computed on `fake.detach()` reaches only the discriminator, whose gradients `zero_grad()`
clears before its own step), while the optimizer that steps after this backward() updates
parameters the term does not reach. No error, no `.grad` is None (the other terms train).

Looked at once per backward() line (its first run), in two halves:
- right after backward(): the loss is split into its added terms (the same reading as AD206:
  names followed to their assignments); for each term held by a name, the leaves requiring
  grad that its graph reaches (a walk of its graph, once per line), and the `.detach()` /
  `.data` cuts in its assignments whose tensor reaches other leaves;
- when the next backward() starts: the optimizers that stepped in between (recorded by the
  step hooks). A term is reported when it reaches none of their parameters while the whole
  loss does, and every leaf it reaches has had its gradient cleared (None or zeros): nothing
  applied what it computed.
The line to change is the cut whose tensor reaches the stepped parameters; the help removes it.

The same cut can take the whole loss off the stepped model: `value = critic(s, a).detach()` (or
`value = critic(s, a)` then `value = value.detach()`) compared with a target that still carries
the target networks' graph. The loss then reaches none of the stepped parameters; it is reported
when a cut in it reaches them (the detached tensor read from the frame, or, when the name now holds
the detached value, the parameters of the module whose call gave the name its previous value) and
every stepped parameter the cut reaches has no gradient (None or zeros) when the next backward()
starts: the step after this backward() had nothing to apply to the model the user detached.
Only ids and weak references of parameters are kept.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field

import torch

from autograd_doctor.analysis import number_terms
from autograd_doctor.analysis.gradient_path import is_variable_wrapper
from autograd_doctor.analysis.source_scope import graph_nodes
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (location_of, parse_file, replace_node_text, segment, source_line,
                                              statement_at, statement_location)
from autograd_doctor.recording.frames import Site

# A graph larger than this is not walked (the check is skipped: unknown means silent).
MAX_NODES = 20000
# How many assignments deep a term's names are followed to find a cut.
MAX_DEPTH = 3


@dataclass
class Cut:
    """A `.detach()` call (or `.data`) in a term's assignments and the leaves its tensor reaches."""

    node: ast.AST
    receiver: ast.AST
    statement: ast.stmt
    reaches: dict[int, weakref.ref]  # id -> the leaf its tensor reaches (weakly)


@dataclass
class Term:
    node: ast.AST
    holder: ast.stmt | None
    leaves: dict[int, weakref.ref]  # id -> the leaf (weakly)
    cuts: list[Cut] = field(default_factory=list)


@dataclass
class PendingLoss:
    """A loss whose terms were read after its backward(), to be judged at the next one."""

    site: Site
    seq: int
    terms: list[Term]
    loss_leaves: dict[int, weakref.ref]  # id -> a leaf the whole loss reaches (weakly)


def _leaves(grad_fn) -> dict[int, weakref.ref] | None:
    """The leaves requiring grad that the graph from `grad_fn` reaches; None for a graph too large."""
    walked, finished = graph_nodes([grad_fn], MAX_NODES)
    if not finished:
        return None
    return {id(node.variable): weakref.ref(node.variable) for node in walked
            if isinstance(getattr(node, "variable", None), torch.Tensor)}


def note_loss(site: Site | None, seq: int, roots: list) -> PendingLoss | None:
    """Right after backward() at `site` of `roots`: the loss's named terms and what each reaches."""
    if len(roots) != 1 or roots[0].grad_fn is None:
        return None
    found = number_terms.loss_terms(site)
    if found is None:
        return None
    terms_found, reading = found
    terms = []
    for original, holder in terms_found:
        node = _named(original, holder)
        value = number_terms.read_value(node, reading) if isinstance(node, ast.Name) else None
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            continue
        leaves = _leaves(value.grad_fn)
        if leaves is None:
            return None
        line = holder.lineno if holder is not None else site.lineno
        expression = holder.value if node is not original else node  # a named term: its assignment's value
        terms.append(Term(node, holder, leaves, _cuts(expression, reading, line, 0)))
    if not terms:
        return None
    loss_leaves = _leaves(roots[0].grad_fn)
    return PendingLoss(site, seq, terms, loss_leaves) if loss_leaves is not None else None


def _named(node: ast.AST, holder: ast.stmt | None) -> ast.AST:
    """The name that holds the term: `adversarial` for the term of `adversarial = F.mse_loss(...)`
    (the whole value of a plain assignment to one name), else the term itself."""
    if isinstance(holder, ast.Assign) and holder.value is node and len(holder.targets) == 1 \
            and isinstance(holder.targets[0], ast.Name):
        return holder.targets[0]
    return node


def _cuts(expression: ast.AST, reading, line: int, depth: int) -> list[Cut]:
    """The `.detach()` / `.data` cuts in `expression` (the value assigned on `line`) and in the
    assignments of the names it reads, whose tensor (read from the frame) has a graph."""
    found = []
    statement = _statement_on(reading.scope, line, expression)
    for inner in ast.walk(expression):
        receiver = _cut_receiver(inner)
        if receiver is None or statement is None:
            continue
        value = number_terms.read_value(receiver, reading) if not isinstance(receiver, ast.Call) else None
        if isinstance(value, torch.Tensor) and value.grad_fn is not None:
            reaches = _leaves(value.grad_fn)
        else:
            reaches = _module_parameters(_module_called(receiver, reading, statement.lineno))
        if reaches:
            found.append(Cut(inner, receiver, statement, dict(reaches)))
    if depth + 1 >= MAX_DEPTH:
        return found
    for name in sorted({n.id for n in ast.walk(expression) if isinstance(n, ast.Name)}):
        bindings = number_terms.assignments_of(name, reading, line)
        if len(bindings) == 1 and isinstance(bindings[0], ast.Assign):
            found.extend(_cuts(bindings[0].value, reading, bindings[0].lineno, depth + 1))
            returned = _cut_returned_by_call(name, bindings[0], reading)
            if returned is not None:
                found.append(returned)
    return found


def _cut_returned_by_call(name: str, binding: ast.Assign, reading) -> Cut | None:
    """`name = helper(a, b)` where `helper` is a function of the same file whose every `return`
    hands back a `Variable(x)` wrapper (or `x.detach()`), and `name` now holds a tensor without a
    graph: the cut is that return statement, and what it cuts off is what the tensor arguments'
    graphs reach (the helper's own tensors are gone with its frame)."""
    call = binding.value
    value = reading.values.get(name) if isinstance(reading.values, dict) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or len(binding.targets) != 1 \
            or not isinstance(value, torch.Tensor) or value.requires_grad:
        return None
    tree = parse_file(reading.filename) if reading.filename else None
    function = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                     and node.name == call.func.id), None) if tree is not None else None
    if function is None:
        return None
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return) and node.value is not None]
    if len(returns) != 1 or _cut_receiver(returns[0].value) is None:
        return None
    reaches: dict[int, weakref.ref] = {}
    for argument in call.args:
        argument_value = number_terms.read_value(argument, reading) if isinstance(argument, ast.Name) else None
        if isinstance(argument_value, torch.Tensor) and argument_value.grad_fn is not None:
            leaves = _leaves(argument_value.grad_fn)
            if leaves is None:
                return None
            reaches.update(leaves)
    if not reaches:
        return None
    return Cut(returns[0].value, _cut_receiver(returns[0].value), returns[0], reaches)


def _statement_on(scope: ast.AST, line: int, expression: ast.AST) -> ast.stmt | None:
    """The statement on `line` that holds `expression`."""
    return next((node for node in ast.walk(scope) if isinstance(node, ast.stmt) and node.lineno == line
                 and any(inner is expression for inner in ast.walk(node))), None)


def _cut_receiver(node: ast.AST) -> ast.AST | None:
    """`x` of `x.detach()` or `x.data`, for a name or attribute chain `x` or a call `model(...)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach" \
            and not node.args and not node.keywords:
        receiver = node.func.value
    elif isinstance(node, ast.Attribute) and node.attr == "data":
        receiver = node.value
    elif isinstance(node, ast.Call) and is_variable_wrapper(node):
        receiver = node.args[0]  # torch.autograd.Variable(x): x detached
    else:
        return None
    if isinstance(receiver, ast.Call):
        return receiver if isinstance(receiver.func, (ast.Name, ast.Attribute)) else None
    return receiver if isinstance(receiver, (ast.Name, ast.Attribute)) else None


def _module_called(receiver: ast.AST, reading, line: int) -> torch.nn.Module | None:
    """The module whose output the cut receives: `model` of `model(...).detach()`, or of the
    assignment `x = model(...)` that gave `x` its value before `x = x.detach()` on `line` (the
    output itself is gone then: the name holds the detached tensor)."""
    call = receiver
    if isinstance(receiver, ast.Name):
        bindings = number_terms.assignments_of(receiver.id, reading, line)
        call = bindings[0].value if len(bindings) == 1 and isinstance(bindings[0], ast.Assign) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    module = number_terms.read_value(call.func, reading)
    return module if isinstance(module, torch.nn.Module) else None


def _module_parameters(module: torch.nn.Module | None) -> dict[int, weakref.ref]:
    if module is None:
        return {}
    return {id(p): weakref.ref(p) for p in module.parameters() if p.requires_grad}


def _cleared(reference: weakref.ref) -> bool:
    leaf = reference()
    if leaf is None:
        return False
    gradient = leaf.grad
    return gradient is None or not bool(gradient.any())


def stepped_since(pending: PendingLoss, recorder) -> tuple[list, list[str]]:
    """The optimizers that stepped since the backward() of `pending`, and the text of each step() call."""
    stepped, step_texts = [], []
    for optimizer_ref, name, stack, seq in recorder.optimizer_steps:
        optimizer = optimizer_ref()
        if seq > pending.seq and optimizer is not None and optimizer not in stepped:
            stepped.append(optimizer)
            text = source_line(stack[0].filename, stack[0].lineno).split("#")[0].strip() if stack else ""
            step_texts.append(text if text.endswith(")") else f"{name}.step()")
    return stepped, step_texts


def _stepped_among(leaves: dict[int, weakref.ref], stepped_params: dict) -> set[int]:
    """Ids of the stepped parameters among `leaves`, read at an earlier backward(): a leaf freed
    since may have left its id to a parameter made later, which is not the leaf."""
    return {key for key, reference in leaves.items() if key in stepped_params and reference() is stepped_params[key]}


def idle_term_diagnosis(pending: PendingLoss, recorder) -> Diagnosis | None:
    """When the next backward() starts: AD211 for a term of `pending` that trained nothing, or None."""
    stepped, step_texts = stepped_since(pending, recorder)
    if not stepped:
        return None  # nothing stepped since (gradient accumulation): not decided
    steps = recorder.optimizer_steps
    if len(steps) >= 4 and steps[0][3] > pending.seq:
        return None  # the record keeps the last 4 steps: an older one since that backward() may be missing
    stepped_params = {id(p): p for optimizer in stepped for group in optimizer.param_groups for p in group["params"]}
    if not _stepped_among(pending.loss_leaves, stepped_params):
        # The loss trains nothing that stepped. Reported only when a cut in it took the stepped
        # model's output off the graph and that model has no gradient to apply (else: another
        # problem, or another step to come).
        for term in pending.terms:
            cut = next((c for c in term.cuts if _stepped_among(c.reaches, stepped_params) and all(
                _cleared(weakref.ref(stepped_params[i])) for i in _stepped_among(c.reaches, stepped_params))), None)
            if cut is not None:
                return _diagnosis(pending.site, term, cut, " and ".join(step_texts), whole_loss=True)
        return None
    for term in pending.terms:
        if _stepped_among(term.leaves, stepped_params) or not term.leaves \
                or not all(_cleared(ref) for ref in term.leaves.values()):
            continue
        cut = next((c for c in term.cuts if _stepped_among(c.reaches, stepped_params)), None)
        return _diagnosis(pending.site, term, cut, " and ".join(step_texts))
    return None


def _diagnosis(site: Site, term: Term, cut: Cut | None, steps: str, whole_loss: bool = False) -> Diagnosis | None:
    filename = site.filename
    name = term.node.id if isinstance(term.node, ast.Name) else (segment(filename, term.node) or "the loss")
    holder = term.holder or statement_at(filename, site.lineno)
    backward = location_of(site, role="backward", note=f"backward() of {name}" if whole_loss
                           else f"backward() of a loss that adds {name}")
    related = []
    if cut is not None:
        receiver = segment(filename, cut.receiver) or ast.unparse(cut.receiver)
        cut_text = segment(filename, cut.node) or ast.unparse(cut.node)
        primary = statement_location(filename, cut.statement, role="cut", note=f"{cut_text} cuts {name} off from "
                                     f"the parameters {steps} updates")
        if holder is not None and holder is not cut.statement:
            related.append(statement_location(filename, holder, role="term", note=f"{name} is computed from it"))
        replaced = replace_node_text(filename, cut.statement, cut.node, receiver)
        helps = [Suggestion(f"use {receiver} itself here, so that {name} sends its gradient through {receiver} to "
                            f"the parameters {steps} updates (detach only where another model's step must "
                            "not train them)", replaced, statement_location(filename, cut.statement))] \
            if replaced is not None else []
    else:
        if holder is None:
            return None
        primary = statement_location(filename, holder, role="term", note=f"{name} reaches none of the parameters "
                                     f"{steps} updates")
        helps = [Suggestion(f"compute {name} from the outputs of the model {steps} trains (without .detach()), or "
                            "step the optimizer of the parameters it reaches before clearing their gradients")]
    related.append(backward)
    if whole_loss:
        notes = [f"the gradient of {name} reaches none of the parameters {steps} updates: they had no gradient "
                 f"to apply, so that step changed nothing, while {name} sends its gradient only into "
                 "tensors no step after it uses (no error: the loss still has a graph)"]
    else:
        notes = [f"the gradient of {name} reaches only parameters that {steps} does not update, and their "
                 f"gradients were cleared before any step used them, so {name} trains nothing; the rest of the "
                 "loss does reach the stepped parameters (no error, no .grad is None)"]
    return Diagnosis(code=codes.IDLE_LOSS_TERM, title=codes.title(codes.IDLE_LOSS_TERM), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


__all__ = ["PendingLoss", "note_loss", "idle_term_diagnosis", "stepped_since"]
