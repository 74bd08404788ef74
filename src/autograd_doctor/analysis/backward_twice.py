"""AD302: "Trying to backward through the graph a second time": which earlier backward()
freed the graph, and which tensor brought the old graph into this one (a hidden state
carried across loop iterations, or a tensor made before the loop).

Older graphs are told apart by node sequence numbers: nodes numbered at or below the
newest node of the previous backward()'s graph were made before it.
"""

from __future__ import annotations

import ast
from typing import Any

import torch

from autograd_doctor import codes
from autograd_doctor.analysis.source_scope import (
    MAX_NODES, Scope, backward_call_node, backward_roots, frame_values, live_frame, loaded_names, root_expression,
)
from autograd_doctor.analysis.describe import tensor_info
from autograd_doctor.report.model import Diagnosis, Location, Suggestion
from autograd_doctor.report.source import (
    location_of, replace_node_text, segment, statement_location,
)


def _is_freed(node) -> bool | None:
    names = [n for n in dir(node) if n.startswith("_saved_")]
    for name in names:
        try:
            getattr(node, name)
        except RuntimeError as error:
            if "freed" in str(error) or "second time" in str(error):
                return True
            continue
        except Exception:
            continue
        return False
    return None


def _frontier(roots: list[torch.Tensor], is_boundary, max_nodes: int = MAX_NODES) -> list[Any]:
    """The first nodes, walking from the roots toward the inputs, for which `is_boundary`
    holds (the walk does not go past them)."""
    frontier = []
    seen = set()
    queue = [t.grad_fn for t in roots if t.grad_fn is not None]
    while queue and len(seen) < max_nodes:
        node = queue.pop(0)
        if node in seen:
            continue
        seen.add(node)
        if is_boundary(node):
            frontier.append(node)
            continue
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return frontier


def older_graph_frontier(roots: list[torch.Tensor], newest_before: int, max_nodes: int = MAX_NODES) -> list[Any]:
    """Where an older graph, made before the previous backward(), joins this one."""

    def is_older(node) -> bool:
        if getattr(node, "variable", None) is not None:
            return False  # AccumulateGrad (a leaf) is never "older"
        try:
            return node._sequence_nr() <= newest_before
        except Exception:
            return False

    return _frontier(roots, is_older, max_nodes)


def freed_frontier(roots: list[torch.Tensor], max_nodes: int = MAX_NODES) -> list[Any]:
    """The first nodes (from the roots) whose saved tensors an earlier backward freed."""
    return _frontier(roots, lambda node: bool(_is_freed(node)), max_nodes)


def _reaches(tensor: torch.Tensor, nodes: list[Any], max_nodes: int = MAX_NODES) -> bool:
    targets = set(nodes)
    start = tensor.grad_fn
    seen = set()
    queue = [start] if start is not None else []
    while queue and len(seen) < max_nodes:
        node = queue.pop()
        if node in targets:
            return True
        if node in seen:
            continue
        seen.add(node)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return False


def _tensors_in(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)) and len(value) < 100:
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _loop_carried(scope: Scope, loop: ast.AST) -> list[tuple[str, ast.stmt]]:
    """Names assigned in the loop body that the body also reads from the previous iteration."""
    carried = []
    assigned: dict[str, ast.stmt] = {}
    for statement, names, value in scope.assignments:
        if loop.lineno <= statement.lineno <= loop.end_lineno:
            for name in names:
                assigned.setdefault(name, statement)
    for name, statement in assigned.items():
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                    and node.lineno <= statement.end_lineno:
                carried.append((name, statement))
                break
    return carried


def _names_loaded_in(loop: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    return names


def _detached_assignment(filename: str, assignment: ast.stmt) -> str | None:
    """`x = <value>` -> `x = <value>.detach()` for a one-line assignment to one name."""
    if not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1
            and isinstance(assignment.targets[0], ast.Name) and assignment.lineno == assignment.end_lineno):
        return None
    value = segment(filename, assignment.value)
    if not isinstance(assignment.value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript)):
        value = f"({value})"
    return f"{assignment.targets[0].id} = {value}.detach()"


def backward_twice_diagnosis(recorder, error, call, args, kwargs) -> Diagnosis | None:
    site = call.site
    roots = backward_roots(args, kwargs)
    # Nodes numbered at or below the previous backward()'s newest node belong to older graphs.
    earlier = [c for c in recorder.backward_calls if c.seq < call.seq and c.newest_node is not None]
    frontier = older_graph_frontier(roots, earlier[-1].newest_node) if earlier else []
    if not frontier:
        frontier = freed_frontier(roots)
    previous = None
    for earlier in reversed(recorder.backward_calls):
        if earlier.seq < call.seq and not earlier.retain_graph:
            previous = earlier
            break
    frame = live_frame(site)
    frame_locals = frame_values(frame) if frame is not None else {}
    scope = Scope(site.filename, site.lineno) if site is not None else None
    statement = scope.statement_at(site.lineno) if scope is not None and scope.tree is not None else None
    root_expr = root_expression(statement) if statement is not None else None
    root_name = segment(site.filename, root_expr) if root_expr is not None else "the loss"

    carrier = None  # (name, assignment statement, value)
    loop = scope.enclosing_loop(statement) if statement is not None else None
    if loop is not None and frontier:
        for name, assignment in _loop_carried(scope, loop):
            value = frame_locals.get(name)
            tensors = _tensors_in(value)
            if tensors and any(t.grad_fn is not None and _reaches(t, frontier) for t in tensors):
                if name not in loaded_names(root_expr) or len(_loop_carried(scope, loop)) == 1:
                    carrier = (name, assignment, value)
                    break
    outside = None  # a tensor made before the loop, with a graph, used in every iteration
    if carrier is None and loop is not None and frontier:
        for name in _names_loaded_in(loop):
            value = frame_locals.get(name)
            if not isinstance(value, torch.Tensor) or value.grad_fn is None or not _reaches(value, frontier):
                continue
            found = scope.latest_assignment(name, loop.lineno)
            if found is not None and found[0].lineno < loop.lineno:
                carrier = outside = (name, found[0], value)
                break
    if carrier is None and frontier:
        for name, value in frame_locals.items():
            if isinstance(value, torch.Tensor) and value.grad_fn is not None and value.grad_fn in frontier \
                    and not name.startswith("_"):
                found = scope.latest_assignment(name, site.lineno + 1) if scope is not None else None
                carrier = (name, found[0] if found else None, value)
                break

    related: list[Location] = []
    same_line = previous is not None and site is not None and previous.site is not None and \
        previous.site.code is site.code and previous.site.lineno == site.lineno
    if previous is not None and previous.site is not None and not same_line:
        related.append(location_of(previous.site, role="freed", note="this backward() freed the graph"))
    backward_loc = location_of(site, role="backward", note="second backward() through the freed graph")
    notes = []
    helps: list[Suggestion] = []
    primary = backward_loc
    tensor = None
    if carrier is not None:
        name, assignment, value = carrier
        tensor = _tensors_in(value)[0]
        if assignment is not None:
            if outside is not None:
                note = (f"{name} is made here, before the loop, with a graph that every iteration's "
                        "backward() goes through")
            else:
                note = (f"{name} carries the previous iteration's graph into this one" if loop is not None
                        else f"{name} holds part of the graph that was freed")
            primary = statement_location(site.filename, assignment, role="carried", note=note)
            related.append(backward_loc)
        if same_line:
            notes.append(f"the backward() on line {site.lineno} in the previous iteration of the loop freed the graph "
                         f"that {name} still points into")
        elif previous is not None and previous.site is not None:
            notes.append(f"the backward() on line {previous.site.lineno} freed the graph that {name} still points into")
        if outside is not None:
            notes.append(f"the first iteration's backward() freed the part of the graph that {name} brings in; "
                         "the next iteration goes through it again")
            detached = _detached_assignment(site.filename, assignment)
            helps.append(Suggestion(
                f"if {name} is a fixed target (old log-probabilities, a teacher's output), detach it where it is "
                "made, or compute it under torch.no_grad()", detached,
                statement_location(site.filename, assignment) if detached else None))
        elif statement is not None and statement.lineno == statement.end_lineno:
            text = segment(site.filename, statement)
            if isinstance(value, (tuple, list)):
                detach = f"{name} = tuple(s.detach() for s in {name})"
            else:
                detach = f"{name} = {name}.detach()"
            helps.append(Suggestion(
                f"detach {name} at the iteration boundary so each backward() only goes through its own "
                "iteration (truncated backpropagation)",
                f"{text}\n{detach}", statement_location(site.filename, statement)))
    else:
        if previous is not None and previous.site is not None:
            notes.append(f"the backward() on line {previous.site.lineno} freed the saved tensors of this graph")
    helps.append(_retain_graph_suggestion(previous))
    diagnosis = Diagnosis(code=codes.BACKWARD_TWICE, title=codes.title(codes.BACKWARD_TWICE), severity="error",
                          primary=primary, related=[loc for loc in related if loc is not None],
                          tensor=tensor_info(tensor, carrier[0]) if tensor is not None else (
                              tensor_info(roots[0], root_name) if roots else None),
                          notes=notes, help=[h for h in helps if h is not None])
    diagnosis.extra.update({"freed_nodes": [type(n).__name__ for n in frontier[:5]],
                            "carrier": carrier[0] if carrier else None,
                            "freed_by_line": previous.site.lineno if previous is not None and previous.site else None})
    return diagnosis


def _retain_graph_suggestion(previous) -> Suggestion | None:
    message = ("or, if both backward passes are meant to go through the same graph, pass retain_graph=True to "
               "the earlier backward()")
    if previous is None or previous.site is None:
        return Suggestion(message)
    filename = previous.site.filename
    scope = Scope(filename, previous.site.lineno)
    statement = scope.statement_at(previous.site.lineno) if scope.tree is not None else None
    call = backward_call_node(statement) if statement is not None else None
    if call is None or statement.lineno != statement.end_lineno or any(k.arg == "retain_graph" for k in call.keywords):
        return Suggestion(message)
    call_text = segment(filename, call)
    inner = call_text[:-1].rstrip()
    new_call = inner + ("retain_graph=True)" if inner.endswith("(") else ", retain_graph=True)")
    return Suggestion(message, replace_node_text(filename, statement, call, new_call), statement_location(filename, statement))
