"""AD246: a loss term computed from a trained module's output under `torch.no_grad()` (or
`inference_mode`, `set_grad_enabled(False)`): it changes the loss's value but carries no graph,
so it trains nothing, and the parameters only it reached get no gradient.

A contrastive or perceptual term whose features were computed in a `with torch.no_grad():` block
(to save memory, or copied from an evaluation path) is added to the loss like any other; the
loss goes down through the other terms and nothing raises.

Looked at once per backward() line, right after the backward call, from what is there at run
time and the function's source (the same reading of the loss's added terms as AD206):
- a term held by an assignment whose name holds, in the backward() frame, a tensor that carries
  no graph (no grad_fn, does not require grad);
- following the names it reads to their assignments in the same function, one is inside a
  grad-off `with` block, and a statement reached there calls a module (or a method of one) bound
  in the frame whose parameters an optimizer of the frame steps;
- some of those parameters have no gradient (None or all zeros) after this backward(): the term
  was their only path to the loss.
A target computed under no_grad (pseudo-labels, a teacher's or an EMA network's output) is
used with a term that still carries a graph, and stays silent; so does a term that carries none
but reads no trained module.

The line named is the `with` block; the help runs its body with gradients on.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis import number_terms
from autograd_doctor.analysis.grad_off_blocks import block_body_dedented
from autograd_doctor.analysis.number_terms import GRAD_OFF_CALLS
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, statement_location
from autograd_doctor.recording.frames import Site

# How many assignments back the names of a term are followed.
MAX_STATEMENTS = 24


def grad_off_term_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD246 for the loss backpropagated at `site` (the backward() call), or None."""
    found = number_terms.loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    stepped = {id(t): t for t in number_terms._stepped_tensors(reading.values)}
    if not stepped:
        return None
    for term, holder in terms:
        if not _holds_tensor_without_graph(holder, term, reading):
            continue
        reached = _statements_reached(holder, reading)
        for block in _grad_off_blocks(reading.scope, reached):
            inside = [s for s in reached if block.lineno < s.lineno <= block.end_lineno]
            for module_name, module in _modules_called(inside, reading):
                untrained = [p for p in module.parameters() if id(p) in stepped and p.requires_grad
                             and (p.grad is None or not bool(p.grad.detach().any()))]
                if untrained:
                    return _diagnosis(site, reading.filename, block, holder, module_name, module, len(untrained))
    return None


def _holds_tensor_without_graph(holder, term, reading) -> bool:
    if not isinstance(holder, ast.Assign) or len(holder.targets) != 1 or not isinstance(holder.targets[0], ast.Name):
        return False
    if holder.value is not term:
        return False
    value = reading.values.get(holder.targets[0].id)
    return isinstance(value, torch.Tensor) and value.is_floating_point() and not value.requires_grad \
        and value.grad_fn is None


def _statements_reached(holder: ast.stmt, reading) -> list[ast.stmt]:
    """The holder and the assignments its names come from, followed back in the function."""
    reached, queue = [holder], [holder]
    while queue and len(reached) < MAX_STATEMENTS:
        statement = queue.pop(0)
        value = statement.value if isinstance(statement, (ast.Assign, ast.AugAssign)) else statement
        names = {node.id for node in ast.walk(value) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        for name in sorted(names):
            for earlier in number_terms.assignments_of(name, reading, statement.lineno, unpacking=True):
                if earlier not in reached:
                    reached.append(earlier)
                    queue.append(earlier)
    return reached


def _grad_off_blocks(scope: ast.AST, statements: list) -> list[ast.With]:
    """The `with torch.no_grad():` (inference_mode, set_grad_enabled) blocks holding one of the
    statements, outermost first."""
    blocks = []
    for node in ast.walk(scope):
        if isinstance(node, (ast.With, ast.AsyncWith)) and _grad_off_header(node) \
                and any(node.lineno < s.lineno <= node.end_lineno for s in statements):
            blocks.append(node)
    return sorted(blocks, key=lambda node: node.lineno)


def _grad_off_header(block: ast.With) -> bool:
    for item in block.items:
        expression = item.context_expr
        function = expression.func if isinstance(expression, ast.Call) else expression
        name = function.id if isinstance(function, ast.Name) else \
            function.attr if isinstance(function, ast.Attribute) else None
        if name in GRAD_OFF_CALLS:
            if name == "set_grad_enabled" and not (isinstance(expression, ast.Call) and expression.args
                                                   and isinstance(expression.args[0], ast.Constant)
                                                   and expression.args[0].value is False):
                continue
            return True
    return False


def _modules_called(statements: list, reading):
    """(name, module) for each call in the statements of a module bound in the frame, or of a
    method of one (`model(x)`, `sampler.decode(z)`)."""
    seen = set()
    for statement in statements:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            target = node.func
            value = number_terms.read_value(target, reading) if isinstance(target, (ast.Name, ast.Attribute)) else None
            if not isinstance(value, torch.nn.Module) and isinstance(target, ast.Attribute):
                target = target.value
                value = number_terms.read_value(target, reading) if isinstance(target, (ast.Name, ast.Attribute)) \
                    else None
            if isinstance(value, torch.nn.Module) and id(value) not in seen:
                seen.add(id(value))
                yield ast.unparse(target), value


def _diagnosis(site, filename: str, block: ast.With, holder: ast.Assign, module_name: str, module,
               untrained: int) -> Diagnosis:
    term = holder.targets[0].id
    header = statement_location(filename, block, role="no_grad",
                                note=f"{module_name} runs here without a graph: {term} is computed from it")
    related = [statement_location(filename, holder, role="term",
                                  note=f"{term} carries no graph: it is added to the loss but trains nothing"),
               location_of(site, role="backward",
                           note=f"{untrained} parameter(s) of {module_name} ({type(module).__name__}) get no gradient")]
    notes = [f"the values computed under a grad-off block have no grad_fn: the loss term {term} made from them "
             "changes the loss's value, not one gradient, and the parameters that only this term reached are "
             "never trained (no error)"]
    helps = []
    body = block_body_dedented(filename, block)  # None for a header of several context managers
    if body is not None:
        helps.append(Suggestion("compute the block with gradients on, so that the term trains the module "
                                "(keep only targets, such as pseudo-labels, under no_grad)", body,
                                statement_location(filename, block)))
    else:
        helps.append(Suggestion(f"compute what {term} is made from outside the grad-off block"))
    return Diagnosis(code=codes.GRAD_OFF_LOSS_TERM, title=codes.title(codes.GRAD_OFF_LOSS_TERM),
                     severity="warning", primary=header, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["grad_off_term_diagnosis"]
