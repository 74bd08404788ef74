"""AD103 where two losses share a model (a GAN's discriminator, an actor-critic's
critic): an optimizer's step() changed weights that a forward pass computed before the
step had saved, and the other loss's backward() goes through that forward.

Moving step() after that backward() runs, but the stepped model then trains on the other
loss's gradients too. What the two-phase training loop means (the DCGAN example's
order) is the forward pass computed again after the step. This module decides, from
what ran, whether the failure has that shape, and finds the forward line in the user's
code: the assignment, in the function that called step(), of the variable whose graph
holds the node that saved the stepped parameter.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import MAX_NODES, Scope, live_frame, frame_values, loaded_names
from autograd_doctor.recording.events import WriteEvent
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import segment, source_line, statement_location

import torch


def _place(site) -> tuple | None:
    return (site.filename, site.lineno) if site is not None else None


def gradients_used_by_step(write: WriteEvent, recorder, backward_site) -> bool:
    """Whether another loss's backward() (another line than the failing one) ran before
    this step(), since the same optimizer's previous step: the step then applied that
    loss's gradients, and moving it after the failing backward() would mix this loss's
    into them. The same line in an earlier iteration is the same loss, one step late."""
    if recorder is None or write is None:
        return False
    failing = _place(backward_site)
    # In the full mode the write comes after its own step() began; in the light mode it
    # carries that step's number. Either way, the step is the latest one at or before it.
    steps = sorted(seq for _optimizer, name, _stack, seq in getattr(recorder, "optimizer_steps", ())
                   if seq <= write.seq and name == write.optimizer)
    if not steps:
        return False
    this_step = steps[-1]
    previous_step = steps[-2] if len(steps) > 1 else 0
    return any(previous_step < call.seq < this_step and _place(call.site) != failing
               for call in getattr(recorder, "backward_calls", ()))


def _reaches(tensor: torch.Tensor, node) -> bool:
    start = getattr(tensor, "grad_fn", None)
    seen = set()
    queue = [start] if start is not None else []
    while queue and len(seen) < MAX_NODES:
        current = queue.pop()
        if current is node:
            return True
        if current in seen:
            continue
        seen.add(current)
        queue.extend(child for child, _ in current.next_functions if child is not None)
    return False


def _one_line_forward(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Assign) and statement.lineno == statement.end_lineno
            and any(isinstance(part, ast.Call) for part in ast.walk(statement.value)))


def _reads(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
               for node in ast.walk(statement))


def forward_before_step(write: WriteEvent, node, backward_line: int | None):
    """(forward statement, variable, Scope, step statement) for the forward computed before
    the step whose graph the failing backward() went through, when moving it to just after
    the step keeps the program's meaning otherwise: same block, nothing in between reads
    its result or changes its inputs, its inputs carry no graph through the stale node, and
    the loss is built from it after the step. None otherwise."""
    site = write.site
    frame = live_frame(site)
    if frame is None or node is None or backward_line is None:
        return None
    values = frame_values(frame)
    scope = Scope(site.filename, site.lineno)
    step_statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if step_statement is None:
        return None
    block = scope.parents.get(step_statement)
    between_step_and_backward = [s for s, _names, _value in scope.assignments
                                 if step_statement.lineno < s.lineno <= backward_line]
    best = None
    for name, value in values.items():
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            continue
        found = scope.latest_assignment(name, step_statement.lineno)
        if found is None:
            continue
        statement = found[0]
        # The value the variable holds now is the one bound before the step.
        latest = scope.latest_assignment(name, backward_line)
        if latest is None or latest[0] is not statement or not _one_line_forward(statement):
            continue
        if scope.parents.get(statement) is not block or not _reaches(value, node):
            continue
        if best is None or statement.lineno > best[0].lineno:
            best = (statement, name)
    if best is None:
        return None
    statement, name = best
    inputs = set(loaded_names(statement.value))
    if any(isinstance(values.get(i), torch.Tensor) and _reaches(values[i], node) for i in inputs):
        return None  # its inputs already went through the stale node: moving it alone does not help
    for other in ast.walk(scope.node or scope.tree):
        if isinstance(other, ast.stmt) and statement.lineno < other.lineno <= step_statement.end_lineno \
                and other is not step_statement and _reads(other, name):
            return None  # something before the step uses the forward's result
    for other, names, _value in scope.assignments:
        if statement.lineno < other.lineno <= step_statement.end_lineno and names & (inputs | {name}):
            return None  # its inputs (or itself) change before the step
    if not any(_reads(other, name) for other in between_step_and_backward):
        return None  # the loss is not built from it after the step
    return statement, name, scope, step_statement


def move_after_step(write: WriteEvent, node, optimizer_name: str,
                    backward_line: int | None) -> tuple[Suggestion, Location] | None:
    """The help (the forward moved to just after step(), the PyTorch DCGAN example's
    order) and the forward line to show."""
    found = forward_before_step(write, node, backward_line)
    if found is None:
        return None
    statement, name, scope, step_statement = found
    filename = scope.filename
    forward_text = segment(filename, statement)
    if not forward_text:
        return None
    indent = source_line(filename, statement.lineno)[: statement.col_offset]
    moved = []
    for number in range(statement.lineno + 1, step_statement.end_lineno + 1):
        line = source_line(filename, number)
        moved.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
    location = statement_location(filename, statement)
    location.end_line = step_statement.end_lineno
    location.end_column = step_statement.end_col_offset
    help = Suggestion(
        f"compute {name} after {optimizer_name}.step() instead of before it, so that this backward() goes through "
        f"the updated weights and {optimizer_name}.step() applies only the gradients it was given (the order of "
        "the PyTorch DCGAN example; calling step() after this backward() would also train that model on this loss)",
        "\n".join([*moved, forward_text]), location)
    forward = statement_location(filename, statement, role="forward",
                                 note=f"{name} computed here, before {optimizer_name}.step() changed the weights it "
                                      "saved: the line to move")
    return help, forward
