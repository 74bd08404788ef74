"""AD163: a codebook loss computed on the straight-through output, so the codebook never trains.

A vector quantiser passes its input `x` on as `x + (e - x).detach()` (the straight-through
estimator): the value is the codebook entry `e`, the gradient goes to `x`. The VQ-VAE codebook loss
`||sg[x] - e||^2` must read `e` itself; written on the straight-through output
(`mse(x + (e - x).detach(), x.detach())`), its gradient goes through the identity path into `x`
(the encoder, a second commitment term) and the codebook, held by the optimizer, never gets a
gradient. Nothing fails.

Looked at only at the first few step() calls of each optimizer, and only when some of its
parameters that require grad have no gradient while others have one. In the frame around step()
(its locals; a bounded walk of each graph, which stays linked after backward()):
- a lookup: a tensor bound there whose graph reaches some of those gradientless parameters;
- its straight-through copy: another tensor bound there, of the same shape and values (allclose),
  whose graph reaches none of them;
- the term: a statement of the function around step() that compares the copy, not under
  `.detach()`, with a detached value (`f(copy, v.detach())` or `copy - v.detach()`), after the
  lookup's name is bound.
The term is the line named; the change reads the lookup in the copy's place there: the forward
values are the same (the copy's value is the lookup's), and the gradient reaches the codebook.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import live_frame, reached_leaves, stored_names
from autograd_doctor.analysis.step_surroundings import FirstSteps
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, parse_file, replace_nodes_text, statement_children, statement_location,
)
from autograd_doctor.recording.frames import frame_locals

# Steps looked at per optimizer, tensors of the frame looked at, graph nodes walked per tensor.
CHECKED_STEPS = 3
MAX_TENSORS = 32
MAX_WALKED_NODES = 5000


class StraightThroughTerms:
    """The optimizers' step counts (the first few steps only) and the ones already reported."""

    def __init__(self):
        self._steps = FirstSteps(CHECKED_STEPS)

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        if not stack or self._steps.take(optimizer) is None:
            return None
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())
                      if isinstance(p, torch.Tensor) and p.requires_grad]
        missing = {id(p): p for p in parameters if p.grad is None}
        if not missing or len(missing) == len(parameters):
            return None
        diagnosis = _straight_through_term(optimizer, stack, missing)
        if diagnosis is not None:
            self._steps.stop(optimizer)
        return diagnosis


def _straight_through_term(optimizer, stack, missing: dict) -> Diagnosis | None:
    site = stack[0]
    frame = live_frame(site)
    if frame is None:
        return None
    tensors = []
    for name, value in frame_locals(frame).items():
        if isinstance(value, torch.Tensor) and readable_grad_fn(value) is not None and value.is_floating_point():
            tensors.append((name, value))
            if len(tensors) >= MAX_TENSORS:
                break
    del frame
    if len(tensors) < 2:
        return None
    reached = {name: reached_leaves([value], MAX_WALKED_NODES) for name, value in tensors}
    tree = parse_file(site.filename)
    if tree is None:
        return None
    function = enclosing_function(tree, site.lineno)
    for lookup_name, lookup in tensors:
        codebook = reached[lookup_name] & missing.keys()
        if not codebook:
            continue
        for copy_name, copy in tensors:
            if copy_name == lookup_name or reached[copy_name] & codebook or not _same_values(copy, lookup):
                continue
            term = _comparing_term(function, copy_name, lookup_name)
            if term is not None:
                statement, uses = term
                return _diagnosis(optimizer, site, statement, uses, copy_name, lookup_name,
                                  [missing[i] for i in codebook], len(missing))
    return None


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    with torch.no_grad():
        return bool(torch.allclose(a, b, rtol=1e-5, atol=1e-6))


def _own_statements(function: ast.AST):
    """The statements of `function` (or of the module), not those of functions and classes defined in it."""
    todo = list(reversed(statement_children(function)))
    while todo:
        current = todo.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(current, ast.stmt):
            yield current
        todo.extend(reversed(statement_children(current)))


def _is_detach(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach"
            and not node.args)


def _comparing_term(function: ast.AST, copy_name: str, lookup_name: str):
    """The first statement of `function` (after `lookup_name` is bound) that compares `copy_name`
    with a detached value, and the `copy_name` nodes that are compared there (not under detach())."""
    bound_at = None
    for statement in _own_statements(function):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(lookup_name in stored_names(target) for target in targets):
                bound_at = statement.lineno if bound_at is None else min(bound_at, statement.lineno)
    if bound_at is None:
        return None
    for statement in _own_statements(function):
        if statement.lineno <= bound_at or not isinstance(statement, (ast.Assign, ast.AugAssign, ast.Expr)):
            continue
        uses = []
        for node in ast.walk(statement):
            pair = None
            if isinstance(node, ast.Call) and len(node.args) >= 2:
                pair = node.args[:2]
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                pair = [node.left, node.right]
            if pair is None:
                continue
            for this, other in (pair, pair[::-1]):
                if isinstance(this, ast.Name) and this.id == copy_name and _is_detach(other):
                    uses.append(this)
        if uses:
            return statement, uses
    return None


def _diagnosis(optimizer, site, statement, uses, copy_name: str, lookup_name: str, codebook: list,
               missing_count: int) -> Diagnosis:
    filename = site.filename
    primary = statement_location(filename, statement, role="term",
                                 note=f"{copy_name} has {lookup_name}'s values, but its graph reaches only what "
                                      f"{lookup_name} was moved from")
    related = [location_of(site, role="step",
                           note=f"{type(optimizer).__name__}.step(): the tensors behind {lookup_name} have no "
                                "gradient")]
    shapes = ", ".join(str(tuple(p.shape)) for p in codebook[:3])
    notes = [f"{copy_name} equals {lookup_name} in value (a straight-through output, `x + ({lookup_name} - x)"
             f".detach()`), but autograd sees only its `x`: this term sends its gradient to `x`, and "
             f"{len(codebook)} tensor(s) held by the optimizer that {lookup_name} is computed from "
             f"(shape {shapes}) get none from it or from any other term",
             "the VQ-VAE codebook loss is `||sg[x] - e||^2`: it must read the codebook entries themselves"]
    helps = []
    replacement = replace_nodes_text(filename, statement, [(use, lookup_name) for use in uses])
    if replacement is not None:
        helps.append(Suggestion(f"compare {lookup_name}, the codebook's own lookup, in this term instead of its "
                                f"straight-through copy {copy_name}: the values are the same, and the gradient "
                                "reaches the codebook", replacement, statement_location(filename, statement)))
    return Diagnosis(code=codes.STRAIGHT_THROUGH_CODEBOOK_TERM, title=codes.title(codes.STRAIGHT_THROUGH_CODEBOOK_TERM),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)
