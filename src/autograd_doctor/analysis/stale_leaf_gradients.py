"""AD218: a tensor updated by hand from its `.grad`, whose `.grad` is never cleared: each
backward() adds to the gradients every earlier update already used.

Gradient descent written out (`w -= lr * w.grad` under no_grad, a PGD attack's
`delta.data = delta + alpha * delta.grad.sign()`) must clear the gradient after each update
(`w.grad.zero_()`, or `w.grad = None`): backward() accumulates into `.grad`. Without that, the
n-th update uses the sum of n gradients. No error; the loss goes down more slowly, or the
attack is weaker. Optimizers' parameters are AD209's (gradients never cleared between steps).

Looked at over the first few backward() calls only (CHECKED_BACKWARDS): after each, the leaves
its graph reached are remembered weakly with their gradient tensor, the gradient's version and
the leaf's version and a fingerprint of its first elements. Before the next backward(), a
remembered leaf counts when its `.grad` is still the same tensor with the same version (nobody
cleared it), its values changed in between (an update), the new graph reaches it again, and no
optimizer holds it.

AD245, from the same records: a remembered leaf NOT updated since, whose `.grad` the user's
function read after the previous backward() (`virial = (x * x.grad).sum()`) and reads again
after this one (`forces = -x.grad`), while this backward() reaches it again, adds into that same
uncleared `.grad`, and no optimizer holds it. The second read gets the sum of both gradients.
The reads are looked for in the source of the function that calls both backward() lines (the
same line in a loop: a read after it in the loop's body); accumulating two losses on purpose
reads `.grad` after the last backward() only, and stays silent.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.naming import modules_in, user_frames, variable_for
from autograd_doctor.analysis.source_scope import Scope, backward_roots, graph_nodes
from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_at, statement_location
from autograd_doctor.recording.calls import AUTOGRAD_GRAD
from autograd_doctor.recording.fingerprint import fingerprint
from autograd_doctor.recording.write_log import storage_base, storage_of

CHECKED_BACKWARDS = 4
# Leaves remembered per backward(), of each kind (plain tensors, nn.Parameters; the rest are not
# looked at), and elements fingerprinted per leaf: an update by gradient descent changes nearly
# every element.
MAX_LEAVES = 64
SAMPLED_ELEMENTS = 4096


@dataclass
class RememberedLeaf:
    leaf: weakref.ref
    gradient: weakref.ref
    gradient_version: int
    version: int
    sample: tuple | None
    shape: tuple


def _sample(leaf: torch.Tensor) -> tuple | None:
    with torch.no_grad():
        return fingerprint(leaf.detach().reshape(-1)[:SAMPLED_ELEMENTS])


def _accumulates(func, kwargs: dict) -> bool:
    """Whether the call adds into the `.grad` of every leaf its graph reaches (not
    autograd.grad, nor a backward restricted to `inputs=`)."""
    return func is not AUTOGRAD_GRAD and kwargs.get("inputs") is None


def _leaves(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    roots = backward_roots(args, kwargs)
    nodes, _ = graph_nodes([t.grad_fn for t in roots if t.grad_fn is not None])
    leaves = [node.variable for node in nodes if getattr(node, "variable", None) is not None]
    # A model's parameters are many and usually an optimizer's; a tensor updated by hand (an
    # attack's perturbation, the input of a large model) may sit anywhere in the walk.
    plain = [leaf for leaf in leaves if not isinstance(leaf, torch.nn.Parameter)]
    parameters = [leaf for leaf in leaves if isinstance(leaf, torch.nn.Parameter)]
    return plain[:MAX_LEAVES] + parameters[:MAX_LEAVES]


def _stepped_parameter_ids(recorder) -> set[int]:
    """Ids of the parameters of the optimizers the recorder saw step (the newest few)."""
    ids: set[int] = set()
    for optimizer_ref, _name, _stack, _seq in recorder.optimizer_steps:
        optimizer = optimizer_ref()
        for group in getattr(optimizer, "param_groups", ()):
            ids.update(id(p) for p in group.get("params", ()))
    return ids


class StaleLeafGradients:
    """Per doctor: the leaves the latest checked backward() reached, and whether AD218 was given."""

    def __init__(self):
        self.remembered: list[RememberedLeaf] = []
        self.reported = False
        self.read_twice_reported = False
        self.previous_site = None  # the site of the backward() whose leaves are remembered
        self.scans = Budget(scans=2)

    def after_backward(self, func, args: tuple, kwargs: dict, recorder=None, call=None) -> None:
        self.remembered = []
        self.previous_site = call.site if call is not None else None
        if not _accumulates(func, kwargs):
            return
        # A leaf an optimizer holds is never reported here (AD209's), so the parameters of the
        # optimizers seen stepping are not fingerprinted: from the second step on, most leaves.
        stepped = _stepped_parameter_ids(recorder) if recorder is not None else set()
        for leaf in _leaves(args, kwargs):
            gradient = leaf.grad
            if gradient is None or id(leaf) in stepped or leaf.is_inference():
                continue
            self.remembered.append(RememberedLeaf(weakref.ref(leaf), weakref.ref(gradient), gradient._version,
                                                  leaf._version, _sample(leaf), tuple(leaf.shape)))

    def before_backward(self, call, func, args: tuple, kwargs: dict, write_log) -> Diagnosis | None:
        remembered, self.remembered = self.remembered, []
        if self.reported or not remembered or not _accumulates(func, kwargs):
            return None
        stale, kept = [], []
        for entry in remembered:
            leaf = entry.leaf()
            gradient = leaf.grad if leaf is not None else None
            if gradient is None or gradient is not entry.gradient() or gradient._version != entry.gradient_version:
                continue  # cleared (set to None, zeroed) or replaced
            if tuple(leaf.shape) != entry.shape:
                continue  # resized (pruned through .data): a step from its gradient keeps the shape
            if leaf._version == entry.version and _sample(leaf) == entry.sample:
                kept.append(leaf)  # not updated since: accumulating, on purpose unless read in between (AD245)
                continue
            if not bool(gradient.detach().any()):
                continue  # zeroed through an alias the version does not see (`w.grad.data.zero_()`)
            stale.append(leaf)
        if not stale:
            if kept and not self.read_twice_reported:
                return self._read_twice(kept, call, args, kwargs)
            return None
        reached = {id(leaf) for leaf in _leaves(args, kwargs)}
        stale = [leaf for leaf in stale if id(leaf) in reached]
        holding = optimizers_holding(stale, self.scans) if stale else None
        if holding is None:
            return None  # nothing reached again, or unknown (the scans are spent)
        held = {id(p) for optimizer in holding for group in optimizer.param_groups for p in group["params"]}
        stale = [leaf for leaf in stale if id(leaf) not in held]  # an optimizer's are AD209's
        if not stale:
            return None
        update_site = _update_site(stale[0], write_log)
        if update_site is not None and not _reads_a_gradient(update_site):
            return None  # updated from something else (a target network's moving average)
        self.reported = True
        return _diagnosis(stale, call, update_site)


    def _read_twice(self, kept: list, call, args: tuple, kwargs: dict) -> Diagnosis | None:
        """AD245: a leaf's `.grad` read after the previous backward(), added into by this one and
        read again after it."""
        site, previous = (call.site if call is not None else None), self.previous_site
        if site is None or previous is None or site.filename != previous.filename:
            return None
        kept = [leaf for leaf in kept if bool(leaf.grad.detach().any())]
        if not kept:
            return None
        frames = user_frames()
        named = [(leaf, variable_for(leaf, frames)) for leaf in kept]
        named = [(leaf, name) for leaf, name in named if name is not None]
        if not named:
            return None
        scope = Scope(site.filename, site.lineno)
        if scope.tree is None:
            return None
        statement = scope.statement_at(site.lineno)
        if statement is None or Scope(site.filename, previous.lineno).node is not scope.node:
            return None  # the two backward() calls are not in one function
        for leaf, name in named:
            reads = _gradient_reads(scope.node, name)
            between, after = _reads_around(scope, reads, previous.lineno, statement)
            if between is None or after is None:
                continue
            if id(leaf) not in {id(t) for t in _leaves(args, kwargs)}:
                continue
            holding = optimizers_holding([leaf], self.scans)
            if holding is None or holding:
                continue  # unknown, or an optimizer's parameter (accumulated over micro-batches)
            self.read_twice_reported = True
            return _read_twice_diagnosis(site.filename, name, statement, between, after)
        return None


def _gradient_reads(scope_node: ast.AST, name: str) -> list[ast.Attribute]:
    """The `name.grad` loads in the scope, outside the functions and classes it defines (not
    `name.grad = ...`)."""
    found, stack = [], list(ast.iter_child_nodes(scope_node))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda node: node.lineno)


def _reads_around(scope, reads: list, previous_line: int, statement: ast.stmt):
    """(a read after the previous backward() and before this one, a read after this one), each
    None when there is none. For two calls of one line (a loop), a read after it in the loop."""
    line = statement.lineno
    if previous_line < line:
        between = [r for r in reads if previous_line < r.lineno < line]
        after = [r for r in reads if r.lineno > statement.end_lineno]
    elif previous_line == line:
        loops = [node for node in ast.walk(scope.node) if isinstance(node, (ast.For, ast.While))
                 and node.lineno < line <= node.end_lineno]
        if not loops:
            return None, None
        loop = max(loops, key=lambda node: node.lineno)
        between = after = [r for r in reads if statement.end_lineno < r.lineno <= loop.end_lineno]
    else:
        return None, None
    return (between[0] if between else None), (after[0] if after else None)


def _read_twice_diagnosis(filename: str, name: str, statement: ast.stmt, between: ast.AST, after: ast.AST):
    between_statement = statement_at(filename, between.lineno)
    after_statement = statement_at(filename, after.lineno)
    text = segment(filename, statement)
    primary = statement_location(filename, statement, role="backward",
                                 note=f"adds this loss's gradient into {name}.grad, which still holds the previous "
                                      "backward()'s")
    related = []
    if between_statement is not None:
        related.append(statement_location(filename, between_statement, role="read",
                                          note=f"reads {name}.grad: the previous backward()'s gradient"))
    if after_statement is not None and after_statement is not between_statement:
        related.append(statement_location(filename, after_statement, role="read",
                                          note=f"reads {name}.grad again: the sum of both gradients"))
    notes = [f"backward() accumulates into .grad: nothing cleared {name}.grad between the two backward() calls, so "
             "the second read gets the sum of both losses' gradients, not this loss's",
             f"no optimizer holds {name}, and its values did not change in between (no update)"]
    helps = []
    if text is not None and statement.lineno == statement.end_lineno:
        helps.append(Suggestion(f"clear {name}.grad before this backward(), so that it holds this loss's gradient "
                                f"only (or take it with torch.autograd.grad(loss, {name}), which leaves .grad alone)",
                                f"{name}.grad = None\n{text}", statement_location(filename, statement)))
    else:
        helps.append(Suggestion(f"set {name}.grad = None before this backward(), or use torch.autograd.grad"))
    return Diagnosis(code=codes.GRAD_READ_AFTER_TWO_BACKWARDS, title=codes.title(codes.GRAD_READ_AFTER_TWO_BACKWARDS),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)


def _reads_a_gradient(site) -> bool:
    """Whether the update's statement reads a `.grad` (or calls `.grad()`): an update from the
    gradient. A target network moved towards another (`t.mul_(0.9).add_(0.1 * s)`) reads none."""
    statement = statement_at(site.filename, site.lineno)
    if statement is None:
        return True  # unknown: the other facts decide
    return any(isinstance(node, ast.Attribute) and node.attr == "grad" for node in ast.walk(statement))


def _owning_module(stale: list[torch.Tensor], frames) -> str | None:
    """The name of a module bound in the user's frames that holds every stale tensor as a
    parameter (its parameters are updated by hand), or None."""
    if not all(isinstance(leaf, torch.nn.Parameter) for leaf in stale):
        return None
    wanted = {id(leaf) for leaf in stale}
    for name, module in modules_in(frames):
        if name and wanted <= {id(p) for p in module.parameters()}:
            return name
    return None


def _update_site(leaf: torch.Tensor, write_log):
    """Where the newest logged write into `leaf`'s memory was made (its update), or None."""
    base, storage = storage_base(leaf), storage_of(leaf)
    for entry in reversed(write_log.entries):
        if entry.landed_in(base, storage) and entry.stack:
            return entry.stack[0]
    return None


def _diagnosis(stale: list[torch.Tensor], call, update_site) -> Diagnosis | None:
    site = call.site if call is not None else None
    if site is None:
        return None
    frames = user_frames()
    owner = _owning_module(stale, frames)
    names = [variable_for(leaf, frames) for leaf in stale]
    plural = len(stale) > 1
    if owner is not None:  # a model's parameters updated by hand
        subject, gradients = f"{owner}'s parameters", f"the .grad of {owner}'s parameters"
        clearing, after = [f"{owner}.zero_grad()"], f"{owner}.zero_grad()"
    elif None not in names:
        subject = _listed(names)
        gradients = _listed([f"{name}.grad" for name in names])
        clearing, after = [f"{name}.grad = None" for name in names], f"{names[0]}.grad.zero_()"
    else:
        subject, gradients, clearing, after = f"{len(stale)} tensor(s)", "their .grad", [], None
    primary = location_of(site, role="backward", note=f"adds to {gradients}, which still "
                                                      f"{'hold' if plural else 'holds'} what the last update used")
    notes = [f"{subject} changed since the previous backward() (an update from the gradient), but {gradients} "
             f"{'were' if plural else 'was'} not cleared: backward() accumulates into .grad, so each update applies "
             "the sum of every gradient so far instead of the current one"]
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if statement is not None and statement.lineno == statement.end_lineno and clearing:
        helps = [Suggestion(f"clear the gradients before each backward() ({after} right after the update does "
                            "the same)", "\n".join([*clearing, segment(site.filename, statement)]),
                            statement_location(site.filename, statement))]
    else:
        helps = [Suggestion("clear each updated tensor's gradient after its update (t.grad.zero_()) or before "
                            "the next backward() (t.grad = None)")]
    updated = f"{owner}'s parameters are updated here; their .grad stay as they are" if owner is not None else \
        f"{names[0] or 'the tensor'} is updated here; its .grad stays as it is"
    related = [location_of(update_site, role="update", note=updated)]
    return Diagnosis(code=codes.STALE_LEAF_GRADIENT, title=codes.title(codes.STALE_LEAF_GRADIENT),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _listed(names: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
