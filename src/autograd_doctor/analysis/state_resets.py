"""AD302 whose old graph comes in through a reset made in place: state kept across samples (a spiking
neuron's membrane buffer, a recurrent state) is cleared with `state.zero_()` or `state.fill_(v)`.
The values are new constants, but autograd records the in-place write on top of the state's
history (a ZeroBackward/FillBackward node whose input is the previous sample's graph), so the next
sample's backward() walks from the cleared state into the graph that the previous backward() freed.

The reset's gradient with respect to the old state is zero, so detaching the state right after the
reset (`state.zero_().detach_()`) changes neither values nor gradients: it only drops a path that
carries zeros.
"""

from __future__ import annotations

import ast
from typing import Any

from autograd_doctor.analysis.graph_reach import graph_reaches
from autograd_doctor.analysis.source_scope import MAX_NODES
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, segment, statement_at, statement_location

# autograd node names (their prefix: the number at the end changes between overloads and versions)
# of in-place writes that replace every value of their target, and the method that makes them.
RESETTING_NODES = {"ZeroBackward": "zero_", "FillBackward": "fill_"}


def _reset_method(node) -> str | None:
    name = type(node).__name__
    return next((method for prefix, method in RESETTING_NODES.items() if name.startswith(prefix)), None)


def resets_into_freed_graph(roots: list, frontier: list[Any], max_nodes: int = MAX_NODES) -> list[str]:
    """The reset methods (`zero_`, `fill_`) whose nodes lie between the roots and the freed graph:
    a reset in place through which this backward() walks into the older graph."""
    targets = set(frontier)
    found: list[str] = []
    seen, queue = set(), [t.grad_fn for t in roots if t.grad_fn is not None]
    while queue and len(seen) < max_nodes:
        node = queue.pop(0)
        if node in seen or node in targets:
            continue
        seen.add(node)
        method = _reset_method(node)
        if method is not None and any(child is not None and graph_reaches(child, targets, MAX_NODES)
                                      for child, _ in node.next_functions):
            if method not in found:
                found.append(method)
            continue
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return found


def _logged_method(op: str) -> str:
    return next((part for part in op.split(".") if part.endswith("_")), op)


def reset_write_site(recorder, methods: list[str], after_seq: int, before_seq: int):
    """The one user line that ran a logged reset (`zero_`/`fill_`) between the previous backward()
    and this one; None when no such write was logged, or when it ran at more than one line."""
    sites = {}
    for entry in getattr(recorder.write_log, "entries", ()):
        if not (after_seq < entry.seq < before_seq) or _logged_method(entry.op) not in methods or not entry.stack:
            continue
        site = entry.stack[0]
        sites[(site.filename, site.lineno)] = (site, _logged_method(entry.op))
    return next(iter(sites.values())) if len(sites) == 1 else None


def _reset_call(statement: ast.stmt, method: str):
    """The one `<state>.<method>(...)` call in the statement."""
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == method]
    return calls[0] if len(calls) == 1 else None


def detach_after_reset(site, method: str) -> tuple[str, Suggestion] | None:
    """(the reset's text, the change `state.zero_()` -> `state.zero_().detach_()`) at the write's
    line; None where the line holds no single such call."""
    filename = site.filename
    if parse_file(filename) is None:
        return None
    statement = statement_at(filename, site.lineno)
    call = _reset_call(statement, method) if statement is not None else None
    text = segment(filename, call) if call is not None else None
    if text is None:
        return None
    changed = replace_node_text(filename, statement, call, f"{text}.detach_()")
    if changed is None:
        return None
    state = segment(filename, call.func.value)
    return text, Suggestion(
        f"detach {state} right after clearing it: {method}() replaces every value, so the gradient with respect to "
        "what it held before is zero, and the path autograd keeps to the previous sample's graph carries nothing "
        "(values and gradients stay the same)",
        changed, statement_location(filename, statement))
