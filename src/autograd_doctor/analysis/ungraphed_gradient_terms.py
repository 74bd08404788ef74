"""AD206 by another route: a loss term built from gradients that `torch.autograd.grad` returned
without `create_graph=True`: the gradients are plain tensors, so the term (a gradient-alignment or
gradient-norm penalty) changes the loss's value and trains nothing. No error. number_terms.py
finds such a cut when the term's names lead to the call through plain assignments; this module
runs only where it found nothing, and follows the names also through the loops that bind them and
the lists filled by `append` / `extend` (the gradients of several environments, then zipped).

DomainBed's IGA (facebookresearch/DomainBed#50) adds `sum_e ||g_e - mean_g||^2` to the mean loss,
with `g_e` and `mean_g` from `autograd.grad(..., retain_graph=True)`: the penalty is logged, its
weight has no effect on training.

Looked at once per backward() line, right after the backward call, when number_terms.py found
no cut (the same reading of the loss's added terms):
- another term of the loss carries a graph (the loss trains), and a term that carries none (no
  name in it holds a tensor that requires grad: `forces - target_forces` is a target's use) reads a name that holds,
  in the backward() frame, a floating tensor with no graph (no grad_fn, does not require grad),
  or a list or tuple of such tensors (the gradients themselves, read in a generator expression);
- following that name back through the function, to its assignments (`=`, `+=`), the loops that
  bind it (`for g, m in zip(grads, mean_grad)`: the names of the iterated expression) and the
  `append` / `extend` calls that filled a list it comes from, a statement reached calls
  `torch.autograd.grad` (the frame's name for it is that function) without `create_graph=True`.
Both facts are the run's and the source's; the help adds `create_graph=True` to each such call
(each line named, the first as the primary location), which makes the gradients, and the term,
differentiable. A term whose tensor carries a graph, or that comes from no such call (a value
meant as a constant), is not reported.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis import number_terms
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_location
from autograd_doctor.recording.frames import Site

# How many statements back the names of a term are followed.
MAX_STATEMENTS = 32
# How many (name, line) pairs are looked up at most.
MAX_NAMES = 64
# What verify-fix calls a change chained after the first (scripts/measure_bug_set.py reads it too).
NEXT_LINE = "and the next line of the same kind, which has the same problem"


def ungraphed_gradient_term_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD206 for the loss backpropagated at `site` (the backward() call), or None."""
    found = number_terms.loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    if not any(_carries_graph(term, holder, reading) for term, holder in terms):
        return None  # no other term trains: not a term left out of a loss that trains
    for term, holder in terms:
        if _carries_graph(term, holder, reading):
            continue  # a term with a graph: a name without one in it is a target (forces - target_forces)
        for name in _names_without_graph(term, reading):
            statements = _statements_reached(name, reading, site.lineno)
            calls = _grad_calls_without_graph(statements, reading)
            if calls:
                return _diagnosis(site, reading.filename, name, calls)
    return None


def _carries_graph(term: ast.AST, holder, reading) -> bool:
    """Whether the term (or the name of the assignment holding it) is a tensor with a graph."""
    if isinstance(holder, ast.Assign) and holder.value is term and len(holder.targets) == 1 \
            and isinstance(holder.targets[0], ast.Name):
        held = reading.values.get(holder.targets[0].id)
        if isinstance(held, torch.Tensor) and held.requires_grad:
            return True
    return any(isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
               and isinstance(value := reading.values.get(node.id), torch.Tensor) and value.requires_grad
               for node in ast.walk(term))


def _names_without_graph(term: ast.AST, reading) -> list[str]:
    names = []
    for node in ast.walk(term):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            value = reading.values.get(node.id)
            values = list(value) if isinstance(value, (list, tuple)) and value else [value]
            if all(_without_graph(v) for v in values):
                names.append(node.id)
    return names


def _without_graph(value) -> bool:
    """A floating tensor with no graph."""
    return isinstance(value, torch.Tensor) and value.is_floating_point() and not value.requires_grad \
        and value.grad_fn is None


def _statements_reached(name: str, reading, before: int) -> list[ast.stmt]:
    """The statements `name`'s value comes from in the function: assignments, the loops binding
    it, the calls filling a list it is read from, and those of the names they read, in turn."""
    reached: list[ast.stmt] = []
    queue = [(name, before)]
    seen = set()
    loops = [node for node in ast.walk(reading.scope) if isinstance(node, (ast.For, ast.AsyncFor))]
    fills = [node for node in ast.walk(reading.scope) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    while queue and len(reached) < MAX_STATEMENTS and len(seen) < MAX_NAMES:
        current, line = queue.pop(0)
        if (current, line) in seen or current in ("self", "torch"):
            continue
        seen.add((current, line))
        sources = list(number_terms.assignments_of(current, reading, line, unpacking=True))
        sources += [node for node in loops if node.lineno < line and current in _bound_names(node.target)]
        sources += [node for node in fills if node.lineno < line and _fills_list(node, current)]
        for statement in sources:
            if statement in reached:
                continue
            reached.append(statement)
            value = statement.iter if isinstance(statement, (ast.For, ast.AsyncFor)) else \
                statement.value
            for node in ast.walk(value):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    queue.append((node.id, statement.lineno))
    return reached


def _bound_names(target: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(target) if isinstance(node, ast.Name)}


def _fills_list(statement: ast.Expr, name: str) -> bool:
    call = statement.value
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("append", "extend") \
        and isinstance(call.func.value, ast.Name) and call.func.value.id == name


def _grad_calls_without_graph(statements: list, reading) -> list[tuple[ast.stmt, ast.Call]]:
    found = []
    for statement in statements:
        value = statement.iter if isinstance(statement, (ast.For, ast.AsyncFor)) else statement.value
        for node in ast.walk(value):
            if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
                continue
            if number_terms.read_value(node.func, reading) is not torch.autograd.grad:
                continue
            keyword = next((k for k in node.keywords if k.arg == "create_graph"), None)
            if keyword is not None and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                continue  # create_graph given (a variable: not known here)
            if any(k.arg is None for k in node.keywords) or len(node.args) > 4:
                continue  # **options, or create_graph given by position
            if not any(call is node for _, call in found):
                found.append((statement, node))
    return sorted(found, key=lambda item: (item[1].lineno, item[1].col_offset))


def _with_create_graph(filename: str, call: ast.Call) -> str | None:
    keyword = next((k for k in call.keywords if k.arg == "create_graph"), None)
    text = segment(filename, call)
    if not text:
        return None
    if keyword is not None:
        old = segment(filename, keyword)
        return text.replace(old, "create_graph=True", 1) if old and old in text else None
    body = text[:-1].rstrip()
    return f"{body[:-1].rstrip()}, create_graph=True)" if body.endswith(",") else f"{body}, create_graph=True)"


def _diagnosis(site: Site, filename: str, name: str, calls: list) -> Diagnosis | None:
    first_statement, _first = calls[0]
    primary = statement_location(filename, first_statement, role="grad",
                                 note="the gradients are computed without create_graph=True: they carry no graph")
    related = [statement_location(filename, s, role="grad", note="the same, for other gradients the term is made from")
               for s, _ in calls[1:]]
    related.append(location_of(site, role="backward",
                               note=f"{name} is in this loss, but carries no graph: it trains nothing"))
    notes = [f"{name} is computed from gradients that torch.autograd.grad returned without create_graph=True: they "
             "are plain tensors, so the term changes the loss's value and sends no gradient to the parameters (its "
             "weight has no effect on training; no error)"]
    helps = []
    for index, (statement, call) in enumerate(calls):
        new_call = _with_create_graph(filename, call)
        changed = replace_node_text(filename, statement, call, new_call) if new_call else None
        if changed is None:
            helps = []
            break
        message = ("take the gradients with create_graph=True, so that the term made from them is differentiable "
                   "and trains the parameters (second-order terms cost memory and time)") if index == 0 else \
            f"{NEXT_LINE} ({codes.NUMBER_TERM_IN_LOSS})"
        helps.append(Suggestion(message, changed, statement_location(filename, statement)))
    if not helps:
        helps = [Suggestion("pass create_graph=True to the torch.autograd.grad calls the term is made from")]
    return Diagnosis(code=codes.NUMBER_TERM_IN_LOSS, title=codes.title(codes.NUMBER_TERM_IN_LOSS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["ungraphed_gradient_term_diagnosis"]
