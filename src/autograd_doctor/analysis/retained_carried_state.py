"""AD103 where a state carried from one loop iteration to the next (an RNN's hidden state) brings the
previous iteration's graph into this one, and `retain_graph=True` on the loop's backward() kept that
graph alive, so the second backward() goes on into it and meets the weights `step()` changed.

Without `retain_graph=True` the same loop fails with "Trying to backward through the graph a second
time" (AD302, which names the carried state). Users often add `retain_graph=True` to silence that
message; then the step between the two backward() calls turns it into "modified by an inplace
operation", and AD103's usual helps (move the step, recompute the forward pass) do not apply: the
forward pass is this iteration's, it is the carried state that reaches back. Held-out sets 46 and 47:
LtC-MSDA#3 (prototypes kept with their graph), Flashback_code#2 (a POI RNN's hidden state).

The state may be a local name (`h = rnn(x, h)`) or an attribute of an object the loop uses
(`self.mean`, set by a method the loop calls, or a module's `self.memory`, set in its forward()).
An attribute's current value holds only this iteration's graph when its store detaches the old
value first (`self.mean = self.mean.detach() * m + batch_mean`), so for an attribute the evidence is
read in the code and checked against the graph: in the loop body up to backward(), following the
object's own methods it calls, the attribute is read before it is stored (the next iteration reads
this iteration's value); its value now carries a graph made after the previous backward(); and the
walk from the failing backward()'s root, stopped at the earlier values of those attributes (nodes of
the current value's kind, with inputs of the same kinds, made before it), reaches nothing made
before the previous backward(), so detaching them cuts every way into the older graph.

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

import torch

from autograd_doctor.analysis.backward_twice import (
    _detach_again, _frontier, _iteration_boundary, _loop_carried, _reaches, _tensors_in,
)
from autograd_doctor.analysis.live_values import attribute_without_running_code, expression_value, readable_grad_fn
from autograd_doctor.analysis.source_scope import Scope, frame_values, live_frame
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import class_definition, replace_node_text, segment, statement_location
from autograd_doctor.recording.frames import in_installed_package


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
        receiver = expression_value(lambda name: values.get(name), call.func.value)
    finally:
        del frame
    filename = backward_site.filename
    kept = [segment(filename, argument) for argument in call.args]
    kept += [segment(filename, keyword) for keyword in call.keywords if keyword.arg != "retain_graph"]
    if any(text is None for text in kept) or segment(filename, call.func) is None:
        return None
    rewritten = replace_node_text(filename, statement, call, f"{segment(filename, call.func)}({', '.join(kept)})")
    if rewritten is None:
        return None
    primary_note = "retain_graph=True keeps the previous iteration's graph, which {} into this one: this backward() goes on into it"
    for name, assignment in _loop_carried(scope, loop):
        value = values.get(name)
        if not any(t.grad_fn is not None and _reaches(t, [node]) for t in _tensors_in(value)):
            continue
        if _iteration_boundary(scope, statement, assignment) is not statement:
            return None  # the state is carried by an assignment after backward(): not this shape
        help = Suggestion(
            f"detach {name} at the iteration boundary, and drop retain_graph=True: each backward() then goes "
            f"only through its own iteration (truncated backpropagation), not into the previous iteration's "
            f"graph, whose saved weights {optimizer_name}.step() has changed since",
            f"{rewritten}\n{_detach_again(name, value)}", statement_location(filename, statement),
            cuts_carried_graph=True)
        primary = statement_location(filename, statement, role="backward", note=primary_note.format(f"{name} carries"))
        carrier = statement_location(filename, assignment, role="carried",
                                     note=f"{name} carries the previous iteration's graph into this one")
        return help, primary, carrier
    if not isinstance(receiver, torch.Tensor) or readable_grad_fn(receiver) is None:
        return None
    carried = _carried_attributes(filename, loop, statement, values, previous.newest_node, receiver, node)
    if not carried:
        return None
    paths = [path for path, _, _ in carried]
    said = " and ".join(paths)
    help = Suggestion(
        f"detach {said} at the iteration boundary, and drop retain_graph=True: each backward() then goes only "
        f"through its own iteration (truncated backpropagation), not into the previous iteration's graph, whose "
        f"saved weights {optimizer_name}.step() has changed since",
        "\n".join([rewritten] + [f"{path} = {path}.detach()" for path in paths]),
        statement_location(filename, statement), cuts_carried_graph=True)
    primary = statement_location(filename, statement, role="backward",
                                 note=primary_note.format(f"{said} {'carry' if len(paths) > 1 else 'carries'}"))
    path, store_file, store = carried[0]
    carrier = statement_location(store_file, store, role="carried",
                                 note=f"{path} keeps this iteration's graph, and the next iteration reads it")
    return help, primary, carrier


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
    number = _sequence_number(node)
    return number is not None and number <= newest_node


def _carried_attributes(loop_file: str, loop: ast.AST, backward_statement: ast.stmt, values: dict,
                        newest_before: int, receiver: torch.Tensor, failing_node) -> list[tuple[str, str, ast.stmt]]:
    """The attributes (`self.mean`) of objects the loop uses that carry an iteration's graph into
    the next, as (path, file of the storing statement, the storing statement); [] unless detaching
    them cuts every path from the failing backward()'s root into the graph made before the previous
    backward() (where the node whose saved tensor changed is).

    A candidate is read before it is stored in the loop body up to backward() (following the
    owner's own methods), and its value now has a graph made after the previous backward(). The
    value the loop read this iteration was stored by the same statement an iteration earlier: in
    the failing graph it is a node of the same kind with children of the same kinds, made before
    the current value's. The walk from the root stops at such nodes; if it then reaches no node made
    before the previous backward(), detaching the attributes at the iteration boundary removes every
    path into the older graph."""
    candidates = []  # (path, store file, store statement, the current value's grad_fn)
    for owner in sorted(_owners_used_in(loop)):
        value = values.get(owner)
        if value is None or isinstance(value, (torch.Tensor, type)) or not hasattr(value, "__dict__"):
            continue
        found = class_definition(type(value))
        methods = {} if found is None or in_installed_package(found[0]) else \
            {m.name: (found[0], m) for m in found[1].body if isinstance(m, ast.FunctionDef)}
        call_method = "forward" if isinstance(value, torch.nn.Module) else "__call__"
        events = []
        for child in loop.body:
            if child.lineno >= backward_statement.lineno:
                break
            events += _statement_events(child, owner, loop_file, methods, call_method, 2, backward_statement.lineno)
        first_kind: dict[str, str] = {}
        first_store: dict[str, tuple[str, ast.stmt]] = {}
        for kind, attribute, where, statement in events:
            first_kind.setdefault(attribute, kind)
            if kind == "store":
                first_store.setdefault(attribute, (where, statement))
        for attribute, kind in first_kind.items():
            if kind != "read" or attribute not in first_store:
                continue
            held = attribute_without_running_code(value, attribute)
            grad_fn = readable_grad_fn(held) if isinstance(held, torch.Tensor) else None
            if grad_fn is not None and _made_after(grad_fn, newest_before):
                candidates.append((f"{owner}.{attribute}", *first_store[attribute], grad_fn))
    if not candidates or not _reaches(receiver, [failing_node]):
        return []
    current = {id(grad_fn): index for index, (_, _, _, grad_fn) in enumerate(candidates)}
    by_shape: dict[tuple, list[int]] = {}
    for index, (_, _, _, grad_fn) in enumerate(candidates):
        by_shape.setdefault(_shape(grad_fn), []).append(index)

    def earlier_value_of(node) -> int | None:
        if id(node) in current:
            return None
        for index in by_shape.get(_shape(node), ()):
            if not _made_after(node, candidates[index][3]._sequence_nr()):
                return index
        return None

    def older(node) -> bool:
        return getattr(node, "variable", None) is None and not _made_after(node, newest_before)

    stops = _frontier([receiver], lambda node: earlier_value_of(node) is not None or older(node))
    cut = [earlier_value_of(node) for node in stops]
    if None in cut:
        return []  # the failing graph also reaches the older graph some other way
    return [candidates[index][:3] for index in sorted(set(cut))]


def _owners_used_in(loop: ast.AST) -> set[str]:
    """Names the loop reads an attribute of (`self.mean`, `trainer.fit(...)`) or calls (`model(x)`)."""
    owners = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owners.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            owners.add(node.func.id)
    return owners


def _shape(node) -> tuple:
    """A node's kind and its inputs' kinds: what the statement that made it fixes."""
    try:
        inputs = tuple(type(child).__name__ if child is not None else None for child, _ in node.next_functions)
    except Exception:
        inputs = ()
    return type(node).__name__, inputs


def _statement_events(statement: ast.stmt, owner: str, where: str, methods: dict, call_method: str,
                      depth: int, stop_line: int | None) -> list[tuple[str, str, str, ast.stmt]]:
    """('read' | 'store', attribute, file, statement) for `owner.<attribute>` in
    the order the statement runs them, going into the owner's own methods it calls (`owner.m(...)`,
    `owner(...)` for its forward) `depth` levels deep. A compound statement's children after
    `stop_line` are left out."""
    events = []
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        if statement.value is not None:
            events += _expression_events(statement.value, statement, owner, where, methods, call_method, depth)
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for node in ast.walk(target):
                if _is_attribute_of(node, owner):
                    if isinstance(statement, ast.AugAssign):
                        events.append(("read", node.attr, where, statement))
                    events.append(("store", node.attr, where, statement))
        return events
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, (ast.stmt, ast.excepthandler)):
            if stop_line is not None and child.lineno >= stop_line:
                break
            events += _statement_events(child, owner, where, methods, call_method, depth, stop_line)
        elif isinstance(child, ast.expr):
            events += _expression_events(child, statement, owner, where, methods, call_method, depth)
    return events


def _expression_events(expression: ast.expr, statement: ast.stmt, owner: str, where: str, methods: dict,
                       call_method: str, depth: int) -> list:
    """Reads of `owner.<attribute>` in the expression, and the events of the owner's methods it
    calls, each call after its arguments (ordered by where each read starts and each call ends)."""
    timed = []
    for node in ast.walk(expression):
        if _is_attribute_of(node, owner) and isinstance(node.ctx, ast.Load) and node.attr not in methods:
            timed.append(((node.lineno, node.col_offset), [("read", node.attr, where, statement)]))
        elif isinstance(node, ast.Call) and depth > 0:
            if _is_attribute_of(node.func, owner):
                method = methods.get(node.func.attr)
            elif isinstance(node.func, ast.Name) and node.func.id == owner:
                method = methods.get(call_method)
            else:
                method = None
            if method is not None:
                method_file, definition = method
                inner = []
                for child in definition.body:
                    inner += _statement_events(child, "self", method_file, methods, call_method, depth - 1, None)
                timed.append(((node.end_lineno, node.end_col_offset), inner))
    return [event for _, found in sorted(timed, key=lambda pair: pair[0]) for event in found]


def _is_attribute_of(node: ast.AST, owner: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == owner


def _made_after(node, newest_before: int) -> bool:
    number = _sequence_number(node)
    return number is not None and number > newest_before


def _sequence_number(node) -> int | None:
    try:
        return node._sequence_nr()
    except Exception:
        return None
