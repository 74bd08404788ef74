"""AD103 where a state carried from one loop iteration to the next (an RNN's hidden state) brings the
previous iteration's graph into this one, and `retain_graph=True` on the loop's backward() kept that
graph alive, so the second backward() goes on into it and meets the weights `step()` changed.

Without `retain_graph=True` the same loop fails with "Trying to backward through the graph a second
time" (AD302, which names the carried state). Users often add `retain_graph=True` to silence that
message; then the step between the two backward() calls turns it into "modified by an inplace
operation", and AD103's usual helps (move the step, recompute the forward pass) do not apply: the
forward pass is this iteration's, it is the carried state that reaches back. Held-out sets 46 and 47:
LtC-MSDA#3 (prototypes kept with their graph), Flashback_code#2 (a POI RNN's hidden state).

Evidence, all required: the backward() statement passes `retain_graph=True` and sits in a loop; an
earlier backward() ran from the same line; the node that saved the stepped weight was made before
that earlier backward() (its sequence number is at or below that backward()'s newest node); and a
name the loop carries (assigned in the body, read there before its assignment) holds a tensor whose
graph reaches that node. The help detaches the carried name right after the backward() and drops
`retain_graph=True`: each backward() then stays in its own iteration (truncated backpropagation),
with the same forward values. Its gradients are meant to differ from those of the oracle that lets
the program run as written (which goes back into the earlier iterations' graphs at the saved
weights): the help says so (`cuts_carried_graph`). Anything else: None, and AD103's other helps
apply.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.backward_twice import (
    _detach_again, _iteration_boundary, _loop_carried, _reaches, _tensors_in,
)
from autograd_doctor.analysis.source_scope import Scope, frame_values, live_frame
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import replace_node_text, segment, statement_location


def carried_state_through_retained_graph(node, backward_site, recorder,
                                         optimizer_name: str) -> tuple[Suggestion, Location, Location] | None:
    """(the help, the backward() statement it changes as the primary, the carried state's
    assignment) or None."""
    if node is None or backward_site is None or recorder is None:
        return None
    scope = Scope(backward_site.filename, backward_site.lineno)
    statement = scope.statement_at(backward_site.lineno) if scope.tree is not None else None
    call = _retaining_backward_call(statement)
    loop = scope.enclosing_loop(statement) if call is not None else None
    if loop is None or statement.lineno != statement.end_lineno:
        return None
    previous = _previous_backward_from(backward_site, recorder)
    if previous is None or not _made_before(node, previous.newest_node):
        return None
    frame = live_frame(backward_site)
    if frame is None:
        return None
    try:
        values = frame_values(frame)
    finally:
        del frame
    for name, assignment in _loop_carried(scope, loop):
        value = values.get(name)
        if not any(t.grad_fn is not None and _reaches(t, [node]) for t in _tensors_in(value)):
            continue
        if _iteration_boundary(scope, statement, assignment) is not statement:
            return None  # the state is carried by an assignment after backward(): not this shape
        filename = backward_site.filename
        kept = [segment(filename, argument) for argument in call.args]
        kept += [segment(filename, keyword) for keyword in call.keywords if keyword.arg != "retain_graph"]
        if any(text is None for text in kept) or segment(filename, call.func) is None:
            return None
        rewritten = replace_node_text(filename, statement, call, f"{segment(filename, call.func)}({', '.join(kept)})")
        if rewritten is None:
            return None
        help = Suggestion(
            f"detach {name} at the iteration boundary, and drop retain_graph=True: each backward() then goes "
            f"only through its own iteration (truncated backpropagation), not into the previous iteration's "
            f"graph, whose saved weights {optimizer_name}.step() has changed since",
            f"{rewritten}\n{_detach_again(name, value)}", statement_location(filename, statement),
            cuts_carried_graph=True)
        primary = statement_location(filename, statement, role="backward",
                                     note=f"retain_graph=True keeps the previous iteration's graph, which {name} "
                                          "carries into this one: this backward() goes on into it")
        carrier = statement_location(filename, assignment, role="carried",
                                     note=f"{name} carries the previous iteration's graph into this one")
        return help, primary, carrier
    return None


def _retaining_backward_call(statement: ast.stmt | None) -> ast.Call | None:
    """The `x.backward(..., retain_graph=True)` call the statement is, or None."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
        return None
    retains = any(keyword.arg == "retain_graph" and isinstance(keyword.value, ast.Constant)
                  and keyword.value.value is True for keyword in call.keywords)
    return call if retains else None


def _previous_backward_from(site, recorder):
    """The backward() call before the last one (the failing one) made from the same line, with its
    newest node known; None when the line ran backward() only once."""
    same_line = [call for call in recorder.backward_calls if call.site is not None
                 and call.site.filename == site.filename and call.site.lineno == site.lineno]
    if len(same_line) < 2 or same_line[-2].newest_node is None:
        return None
    return same_line[-2]


def _made_before(node, newest_node: int) -> bool:
    try:
        return node._sequence_nr() <= newest_node
    except Exception:
        return False
