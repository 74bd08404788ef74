"""Mixed precision's gradient scaler called out of order. Per optimizer, GradScaler allows
`unscale_()` at most once, then `step()` once, then `update()`; each of its three refusals names
the call it refused, never the line that broke the order:

- `scaler.unscale_(optimizer)` a second time before `scaler.update()` (AD148), most often once per
  micro-batch in a loop that accumulates gradients and steps (and updates) only every N
  micro-batches. The help moves the `unscale_` statement, with the clipping calls right after it,
  into the block that runs `scaler.step(optimizer)`, just before that call; inside a loop that
  neither backpropagates nor steps (one pass per parameter group), before that loop.
- `scaler.unscale_(optimizer)` after `scaler.step(optimizer)` (AD149), usually to clip: the
  clipping then changes gradients that step() has already applied. The help moves the unscale_
  and its clipping to just before the step, unless the clipping is of another optimizer's
  parameters, stepped next: then the call names the wrong optimizer, and the help names that one.
- `scaler.step(optimizer)` a second time before `scaler.update()` (AD150): the loop has no
  `scaler.update()`. The help adds it right after the step; when update() and zero_grad() run
  under a condition the step is outside of (gradient accumulation), it moves the step under it.

`scaler.step(optimizer)` also refuses an optimizer none of whose parameters has a gradient ("No inf
checks were recorded for this optimizer.", AD167): the backward() before it did not reach the
model. The common cause is a loss computed outside torch (NumPy, `.item()`, `.tolist()`) and
wrapped back with `torch.tensor(value, requires_grad=True)` so that backward() runs: that tensor is
a new leaf, and its graph holds nothing else. The diagnosis names the line that made it (recorded
at run time), or the step when no such leaf is found. What replaces the computation is the
user's (the same formula with torch operations on the model's output): advice.

It also refuses gradients in float16 ("Attempting to unscale FP16 gradients.", AD151): the
trained model was cast to half precision (`model.half()`, `model.to(dtype=torch.float16)`), so
its parameters and their gradients are float16. The scaler exists to keep float32 parameters
(master weights) while autocast computes in float16. The help casts the trained model to
float32 at the line that made it float16: a cast of the model in the step's file, in a helper
that returns it, or, for a submodule, in the class that builds it (`self.prelu =
nn.PReLU(c).to(torch.float16)`, `self.visual_encoder.half()` in `__init__`), which the traceback
does not show.

Clipping itself can stop a mixed-precision loop: `clip_grad_norm_(..., error_if_nonfinite=True)`
(or `torch.nn.utils.get_total_norm(..., error_if_nonfinite=True)`, the norm half of its two-step
spelling) raises on gradients whose norm is inf or NaN, and at a scale that is too large the scaled backward
overflows on purpose: GradScaler finds its scale by letting such a step overflow, skipping it in
`scaler.step()` and lowering the scale in `scaler.update()` (AD183). When an enabled GradScaler is
in the program and the loop steps through it, the help clips with `error_if_nonfinite=False`: the
step that overflowed is skipped as it would have been, the others are clipped as before.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types

import torch

from autograd_doctor.analysis.source_scope import block_holding
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, value_of
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, class_definition, location_of, parse_file, replace_node_text, segment, source_line, statement_at,
    statement_location,
)
from autograd_doctor.recording import leaf_sites

CLIP_CALLS = ("clip_grad_norm_", "clip_grad_value_")
# The calls that raise on a non-finite total norm when given error_if_nonfinite=True, with that
# argument's position: clip_grad_norm_ and the norm half of its two-step spelling (torch.nn.utils.
# get_total_norm, then clip_grads_with_norm_), which a loop calls to log the norm it clips with.
NONFINITE_REFUSING_CALLS = {"clip_grad_norm_": 3, "get_total_norm": 2}


def _method_call(statement: ast.stmt, method: str) -> ast.Call | None:
    """The call of `statement` when it is `receiver.method(...)` as a statement."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == method:
        return statement.value
    return None


def _calls(node: ast.AST, method: str, receiver: str, filename: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == method and segment(filename, n.func.value) == receiver]


def _function_around(filename: str, statement: ast.stmt) -> ast.AST | None:
    """The function (or module) whose body holds `statement`."""
    tree = parse_file(filename)
    return enclosing_function(tree, statement.lineno) if tree is not None else None


def unscaled_twice(context: ErrorContext, already):
    found = _grad_scaler_call(context, "unscale_")
    if found is None:
        return None
    frame, filename, statement, location, call, receiver, optimizer_text = found
    location.role, location.note = "unscale", (f"{receiver}.unscale_({optimizer_text}) runs again before "
                                               f"{receiver}.update()")
    scope = _function_around(filename, statement)
    step = _step_statement(scope, filename, receiver) if scope is not None else None
    if step is None and scope is not None:
        through = _helper_call_before_step(context, frame, value_of(frame, call.func.value))
        if through is not None:
            return _helper_called_every_pass(location, notes_receiver=(receiver, optimizer_text), found=through)
    related = []
    if step is not None:
        related.append(statement_location(filename, step, role="step", note=f"{receiver}.step() and update() run "
                                          "less often than unscale_(): only when this line runs"))
    notes = [f"unscale_() divides the gradients of {optimizer_text}'s parameters by the loss scale, and may run once "
             f"per step: after one unscale_(), the scaler refuses another until {receiver}.update() (after "
             f"{receiver}.step()) resets it"]
    gated = _step_gated_on_unscaled_gradients(filename, scope, statement, step, receiver) \
        if step is not None and scope is not None else None
    if gated is not None:
        return _update_skipped_with_the_step(filename, location, receiver, optimizer_text, step, gated)
    help_ = _move_into_step_block(filename, scope, statement, step, receiver) if step is not None else None
    repeated = _loop_repeating(scope, filename, statement, receiver) if help_ is None and scope is not None else None
    if repeated is not None:
        # A loop around the unscale_() that neither backpropagates nor steps (one pass per parameter
        # group, to clip each with its own norm): the gradients are the same in every pass, so one
        # unscale_() before the loop is what every pass needs.
        loop_text = text_of(filename, repeated.target) if isinstance(repeated, ast.For) else "the loop"
        related.append(statement_location(filename, repeated, role="loop", note=f"repeats the unscale_() once per "
                                          f"{loop_text}, with no backward() or step() between"))
        notes.append(f"the loop at line {repeated.lineno} runs {receiver}.unscale_({optimizer_text}) once per pass, "
                     "and no backward() or step() runs between the passes")
        help_ = _hoist_before_loop(filename, repeated, statement, receiver, optimizer_text)
    if help_ is not None and repeated is None:
        notes.append(f"{receiver}.step() runs inside a condition this line is not under (gradient accumulation: a "
                     "step every N backward() calls), so an unscale_() in every iteration runs twice before the "
                     "first update()")
    if help_ is None and repeated is None and scope is not None:
        before_backward = _unscale_before_later_backward(filename, scope, statement, receiver, optimizer_text)
        if before_backward is not None:
            # unscale_() (and its clipping) after the first of several backward() calls of one step: the
            # gradients were not complete yet. The one after the last backward() is the one to keep.
            earlier, help_ = before_backward
            earlier_location = statement_location(filename, earlier, role="unscale", note="unscales before "
                                                  "another backward() of the same step adds its gradients")
            location.role = "raised"
            notes.append(f"a backward() runs between the two {receiver}.unscale_({optimizer_text}) calls: the first "
                         "one (and the clipping after it) saw the gradients of the first loss only")
            return diagnosis(codes.UNSCALE_BEFORE_UPDATE, earlier_location, related=[location] + related,
                             notes=notes, help=[help_])
    if help_ is None and step is None:
        earlier = _other_unscale(filename, scope, statement, receiver, optimizer_text)
        if earlier is not None:
            # Another unscale_() of the same optimizer (a clipping hook) already ran in this step,
            # and this one is not repeated by a loop: the gradients are unscaled, this call can go.
            related.append(statement_location(filename, earlier, role="unscale", note=f"{receiver}.unscale_("
                                              f"{optimizer_text}) is also called here, earlier in the step"))
            notes.append(f"the gradients were already unscaled by the other {receiver}.unscale_({optimizer_text}) "
                         "of this step: this second call has nothing left to do")
            help_ = Suggestion(f"delete this {receiver}.unscale_({optimizer_text}) line: the gradients it reads are "
                               "already unscaled", location=statement_location(filename, statement))
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {receiver}.unscale_({optimizer_text}) once per step: after the last backward() of the "
        f"accumulation, just before {receiver}.step({optimizer_text}) (clip between the two)")]
    return diagnosis(codes.UNSCALE_BEFORE_UPDATE, location, related=related, notes=notes, help=helps)


def _step_gated_on_unscaled_gradients(filename: str, scope: ast.AST, unscale: ast.stmt, step: ast.stmt,
                                      receiver: str):
    """(the `if` around the step, the `receiver.update()` statement beside the step) when the step
    runs under an `if` of the unscale_'s own block whose test reads a name bound between the two
    (`grad_norm = clip_grad_norm_(...)` after unscaling: a step skipped on a large gradient), and
    update() is a one-line statement of the step's own branch. The skip is chosen from the unscaled
    gradients, so the unscale_() cannot move into that branch: update() has to leave it."""
    block = block_holding(scope, unscale)
    if block is None:
        return None
    start = block.index(unscale)
    gate = next((s for s in block[start + 1:] if isinstance(s, ast.If) and s.lineno <= step.lineno <= s.end_lineno),
                None)
    if gate is None:
        return None
    bound_between = set()
    for statement in block[start + 1:block.index(gate)]:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound_between.add(node.id)
    read_by_test = {node.id for node in ast.walk(gate.test) if isinstance(node, ast.Name)}
    if not bound_between & read_by_test:
        return None
    branch = block_holding(gate, step)
    if branch is None or branch not in (gate.body, gate.orelse):
        return None
    updates = [s for s in branch if _method_call(s, "update") is not None
               and segment(filename, s.value.func.value) == receiver and s.lineno == s.end_lineno]
    if len(updates) != 1 or len(branch) < 2 or _calls(gate, "update", receiver, filename) != [updates[0].value]:
        return None
    return gate, updates[0]


def _update_skipped_with_the_step(filename: str, location, receiver: str, optimizer_text: str, step: ast.stmt,
                                  gated):
    """AD148 named at the `receiver.update()` that shares the skipped step's branch; the help moves
    it after the `if`, so it runs on every iteration (GradScaler's order: unscale_(), then step() if
    wanted, then update() on every iteration)."""
    gate, update = gated
    indent = source_line(filename, gate.lineno)[:gate.col_offset]
    gate_lines = [source_line(filename, number).rstrip() for number in range(gate.lineno, gate.end_lineno + 1)
                  if number != update.lineno]
    update_text = segment(filename, update)
    if update_text is None or any(line.strip() and not line.startswith(indent) for line in gate_lines):
        return None
    text = "\n".join(line[len(indent):] for line in gate_lines) + "\n" + update_text
    help_location = statement_location(filename, gate)
    primary = statement_location(filename, update, role="update", note=f"{receiver}.update() runs only when the step "
                                 "runs: a skipped step leaves the scaler unscaled")
    location.role, location.note = "raised", (f"the next {receiver}.unscale_({optimizer_text}) finds the last one "
                                              "not followed by update()")
    related = [location, statement_location(filename, gate, role="skip", note="chooses to skip the step from the "
                                            "gradients unscale_() left (their norm)")]
    notes = [f"unscale_() may run once per update(): on an iteration whose step is skipped, {receiver}.update() is "
             f"skipped with it, and the next iteration's unscale_() raises",
             f"the skip is decided from the unscaled gradients, so unscale_() stays before it; {receiver}.update() "
             "runs on every iteration (after a skipped step it only adjusts the scale)"]
    help_ = Suggestion(f"call {receiver}.update() on every iteration, after the if that may skip "
                       f"{receiver}.step({optimizer_text})", text, help_location)
    return diagnosis(codes.UNSCALE_BEFORE_UPDATE, primary, related=related, notes=notes, help=[help_])


def _helper_call_before_step(context: ErrorContext, frame, scaler):
    """(caller's file, its statement calling the helper, the caller's step statement, the caller's
    text for the scaler, the move) when the unscale_() is in a helper function (a clipping helper
    in another file) whose caller steps that same scaler under a condition the call is not under
    (gradient accumulation): the call of the helper is what runs once per micro-batch."""
    frames = context.user_frames()
    index = next((i for i, (f, _line) in enumerate(frames) if f is frame), None)
    if index is None or index + 1 >= len(frames) or scaler is None:
        return None
    caller, line = frames[index + 1]
    filename = caller.f_code.co_filename
    tree = parse_file(filename)
    scope = enclosing_function(tree, line) if tree is not None else None
    # The call as a statement of its own: a result bound by it (`norm = clip(...)`) may be read on
    # every pass, after the step's block, where moving the call would leave it unbound.
    statement = next((node for node in ast.walk(scope) if isinstance(node, ast.Expr)
                      and node.lineno <= line <= node.end_lineno and isinstance(node.value, ast.Call)),
                     None) if scope is not None else None
    if statement is None:
        return None
    steps = [node for node in ast.walk(scope) if isinstance(node, ast.stmt) and (c := _method_call(node, "step"))
             is not None and value_of(caller, c.func.value) is scaler]
    if len(steps) != 1:
        return None
    receiver = segment(filename, steps[0].value.func.value)
    moved = _move_into_step_block(filename, scope, statement, steps[0], receiver)
    return (filename, statement, steps[0], receiver, moved) if moved is not None else None


def _helper_called_every_pass(location, notes_receiver, found):
    """AD148 named at the call of the helper that unscales: it runs in every micro-batch, while the
    step runs every N."""
    receiver, optimizer_text = notes_receiver
    filename, statement, step, caller_receiver, moved = found
    name = segment(filename, statement.value.func) or "the helper"
    primary = statement_location(filename, statement, role="unscale",
                                 note=f"{name}() unscales {optimizer_text}'s gradients, and runs on every pass")
    location.role, location.note = "raised", f"the {receiver}.unscale_({optimizer_text}) inside {name}()"
    related = [location, statement_location(filename, step, role="step",
                                            note=f"{caller_receiver}.step() and update() run less often: only when "
                                                 "this line runs")]
    notes = [f"unscale_() may run once per step: {name}() calls it, and is called on every pass (gradient "
             f"accumulation), while {caller_receiver}.step() runs under a condition; the second pass unscales again "
             "before any update()"]
    moved.message = (f"call {name}() once per step, just before {caller_receiver}.step(): after the last backward() "
                     "of the accumulation")
    return diagnosis(codes.UNSCALE_BEFORE_UPDATE, primary, related=related, notes=notes, help=[moved])


def _unscale_before_later_backward(filename: str, scope: ast.AST, statement: ast.stmt, receiver: str,
                                   optimizer_text: str):
    """(the earlier unscale_ statement, a help deleting it and its clipping) when, in the block of
    `statement`, the same `receiver.unscale_(optimizer)` ran earlier, followed by clipping and then a
    backward() before `statement`: a step with several backward() calls unscaled after the first.
    The help rewrites the statement before the earlier unscale_ through its clipping as that statement
    alone (the gradients are unscaled and clipped once, after the last backward())."""
    block = block_holding(scope, statement)
    if block is None:
        return None
    index = block.index(statement)
    earlier = [i for i, s in enumerate(block[:index]) if _method_call(s, "unscale_") is not None
               and s.value.args and segment(filename, s.value.func.value) == receiver
               and segment(filename, s.value.args[0]) == optimizer_text]
    if len(earlier) != 1 or earlier[0] == 0:
        return None
    start = earlier[0]
    clipping = _clipping_after(block, start)
    after = block[start + 1 + len(clipping):index]
    if not any(isinstance(n, ast.Attribute) and n.attr == "backward" for s in after for n in ast.walk(s)):
        return None
    kept = block[start - 1]
    removed_end = (clipping[-1] if clipping else block[start])
    kept_text = segment(filename, kept)
    if kept_text is None or kept.lineno != kept.end_lineno or "\n" in kept_text:
        return None
    location = statement_location(filename, kept)
    location.end_line, location.end_column = removed_end.end_lineno, removed_end.end_col_offset
    return block[start], Suggestion(f"delete this {receiver}.unscale_({optimizer_text}) and the clipping after it: "
                                    "the gradients are not complete until the last backward(); the unscale_() after "
                                    "it unscales and clips them once", kept_text, location)


def _loop_repeating(scope: ast.AST, filename: str, statement: ast.stmt, receiver: str):
    """The innermost for/while loop whose body holds `statement` directly and calls neither
    backward() nor `receiver.step()`; None otherwise."""
    loops = [node for node in ast.walk(scope) if isinstance(node, (ast.For, ast.While)) and statement in node.body]
    if len(loops) != 1 or loops[0].orelse:
        return None
    loop = loops[0]
    calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    if any(c.func.attr == "backward" or c.func.attr == "step" and segment(filename, c.func.value) == receiver
           for c in calls):
        return None
    return loop


def _hoist_before_loop(filename: str, loop: ast.stmt, unscale: ast.stmt, receiver: str, optimizer_text: str
                       ) -> Suggestion | None:
    """The loop rewritten with the unscale_ statement before it (and the loop without it)."""
    indent = source_line(filename, loop.lineno)[:loop.col_offset]
    loop_lines = [source_line(filename, number).rstrip() for number in range(loop.lineno, loop.end_lineno + 1)]
    unscale_lines = set(range(unscale.lineno, unscale.end_lineno + 1))
    kept = [line for number, line in zip(range(loop.lineno, loop.end_lineno + 1), loop_lines)
            if number not in unscale_lines]
    if any(line.strip() and not line.startswith(indent) for line in loop_lines):
        return None
    if len(loop.body) == 1:
        kept = []  # the loop did nothing else: one unscale_() replaces it
    unscale_text = segment(filename, unscale)
    if unscale_text is None or "\n" in unscale_text:
        return None
    text = "\n".join([unscale_text] + [line[len(indent):] for line in kept])
    location = statement_location(filename, loop)
    location.end_line, location.end_column = loop.end_lineno, loop.end_col_offset
    return Suggestion(f"call {receiver}.unscale_({optimizer_text}) once, before the loop: the gradients are "
                      "unscaled for every pass of it", text, location)


def _other_unscale(filename: str, scope: ast.AST | None, statement: ast.stmt, receiver: str,
                   optimizer_text: str) -> ast.stmt | None:
    """The one other `receiver.unscale_(optimizer)` statement of the file, when the failing one is
    not inside a loop of its function (a loop would make it the one that runs twice)."""
    tree = parse_file(filename)
    if tree is None or scope is None or any(isinstance(node, (ast.For, ast.While)) and
                                            node.lineno <= statement.lineno <= node.end_lineno
                                            for node in ast.walk(scope)):
        return None
    others = [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and node is not statement
              and (call := _method_call(node, "unscale_")) is not None and segment(filename, call.func.value) == receiver
              and call.args and segment(filename, call.args[0]) == optimizer_text]
    return others[0] if len(others) == 1 else None


def _step_statement(scope: ast.AST, filename: str, receiver: str) -> ast.stmt | None:
    """The one statement `receiver.step(...)` in the function around the failing line."""
    found = [node for node in ast.walk(scope) if isinstance(node, ast.stmt) and _method_call(node, "step") is not None
             and segment(filename, node.value.func.value) == receiver]
    return found[0] if len(found) == 1 else None


def _move_into_step_block(filename: str, scope: ast.AST, unscale: ast.stmt, step: ast.stmt, receiver: str
                          ) -> Suggestion | None:
    """The unscale_ statement and the clipping statements right after it moved to just before
    `step`, which is inside a later statement (an `if`) of the same block; None otherwise."""
    block = block_holding(scope, unscale)
    if block is None:
        return None
    start = block.index(unscale)
    moved = [unscale] + _clipping_after(block, start)
    holder = next((s for s in block[start + len(moved):] if s.lineno <= step.lineno <= s.end_lineno), None)
    if holder is None or holder is step or _calls(holder, "unscale_", receiver, filename):
        return None  # step() is not inside a later statement of the same block, or it unscales there too
    indent = source_line(filename, unscale.lineno)[:unscale.col_offset]
    step_indent = source_line(filename, step.lineno)[:step.col_offset]
    lines = []
    for number in range(moved[-1].end_lineno + 1, step.lineno):
        lines.append(source_line(filename, number).rstrip())
    moved_lines = [source_line(filename, number).rstrip()
                   for statement in moved for number in range(statement.lineno, statement.end_lineno + 1)]
    if any(line.strip() and not line.startswith(indent) for line in lines + moved_lines):
        return None
    lines += [step_indent + line[len(indent):] for line in moved_lines]
    lines += [source_line(filename, number).rstrip() for number in range(step.lineno, step.end_lineno + 1)]
    location = statement_location(filename, unscale)
    location.end_line, location.end_column = step.end_lineno, step.end_col_offset
    text = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)
    return Suggestion(f"call {receiver}.unscale_() (and the clipping after it) once per step, just before "
                      f"{receiver}.step(): after the last backward() of the accumulation", text, location)


def _grad_scaler_call(context: ErrorContext, method: str):
    """(frame, filename, statement, location, call, receiver text, optimizer text) when the user's
    statement that raised is `receiver.method(optimizer)` on a GradScaler; else None."""
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    call = _method_call(statement, method)
    scaler = value_of(frame, call.func.value) if call is not None else None
    if call is None or not any(cls.__name__ == "GradScaler" for cls in type(scaler).__mro__):
        return None
    optimizer_text = segment(filename, call.args[0]) if call.args else "optimizer"
    return frame, filename, statement, location, call, segment(filename, call.func.value), optimizer_text


def unscaled_after_step(context: ErrorContext, already):
    found = _grad_scaler_call(context, "unscale_")
    if found is None:
        return None
    _frame, filename, statement, location, _call, receiver, optimizer_text = found
    location.role, location.note = "unscale", f"{receiver}.unscale_({optimizer_text}) runs after {receiver}.step()"
    scope = _function_around(filename, statement)
    block = block_holding(scope, statement) if scope is not None else None
    step = None
    if block is not None:
        earlier = [s for s in block[:block.index(statement)] if _method_call(s, "step") is not None
                   and segment(filename, s.value.func.value) == receiver]
        step = earlier[-1] if earlier else None
    meant = _optimizer_clipped_instead(_frame, filename, block, statement, found[4]) if block is not None else None
    if meant is not None:
        # The clipping after this unscale_() is of another optimizer's parameters, stepped next and
        # never unscaled: the call names the wrong optimizer (a GAN's generator half copied from
        # the discriminator's). Moving it before the earlier step would unscale that one twice.
        other_text, other_step = meant
        related = [statement_location(filename, step, role="step", note=f"{receiver}.step({optimizer_text}) "
                                      "already applied its gradients here")] if step is not None else []
        related.append(statement_location(filename, other_step, role="step", note=f"{receiver}.step({other_text}) "
                                          "applies the gradients clipped after the unscale_(), never unscaled"))
        notes = [f"the clipping after this line is of parameters that {other_text} trains, and "
                 f"{receiver}.step({other_text}) follows: the unscale_() meant for them names {optimizer_text}, "
                 f"whose step() has already run"]
        help_ = Suggestion(f"unscale {other_text}, whose gradients are clipped and stepped next",
                           replace_node_text(filename, statement, found[4].args[0], other_text),
                           statement_location(filename, statement))
        return diagnosis(codes.UNSCALE_AFTER_STEP, location, related=related, notes=notes, help=[help_])
    help_ = _move_before_step(filename, block, statement, step, receiver) if step is not None else None
    inner = None
    if step is None:
        # The unscale_ is in a helper (clip_gradients(scaler, ...)): the caller's statement that
        # runs the helper after its step() is the one to move.
        caller = _caller_after_step(context, _frame, found[4])
        if caller is not None:
            inner = location
            filename, block, statement, step, receiver = caller
            location = statement_location(filename, statement, role="unscale",
                                          note=f"runs {receiver}.unscale_() after {receiver}.step()")
            help_ = _move_before_step(filename, block, statement, step, receiver)
        elif (exiting := _step_inside_exiting_with(context, _frame, found[4])) is not None:
            # The unscale_ runs when a context manager's block exits (code after its `yield`), and
            # the block ends with the step: the step is the statement to move, below the block.
            inner = location
            filename, step, receiver, help_ = exiting
            location = statement_location(filename, step, role="step",
                                          note=f"{receiver}.step() runs inside the with block, whose exit unscales "
                                          "and clips after it")
            step = None
        else:
            hoisted = _caller_unscaling_every_optimizer(context, _frame, found[4])
            if hoisted is not None:
                inner = location
                filename, statement, step, receiver, help_ = hoisted
                location = statement_location(filename, statement, role="unscale",
                                              note="unscales every optimizer of the loop, at each of its passes")
    related = [statement_location(filename, step, role="step", note=f"{receiver}.step() already applied the "
                                  "gradients here")] if step is not None else []
    if inner is not None:
        related.append(inner)
    notes = [f"{receiver}.step({optimizer_text}) applies the gradients; unscaling (and clipping) them afterwards "
             "changes nothing that step used, so GradScaler refuses unscale_() between step() and update()"]
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {receiver}.unscale_({optimizer_text}) (and clip) before {receiver}.step({optimizer_text}), "
        "after the last backward()")]
    return diagnosis(codes.UNSCALE_AFTER_STEP, location, related=related, notes=notes, help=helps)


def _parameter_ids(optimizer) -> set[int]:
    return {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())}


def _clipped_parameter_ids(frame, filename: str, statement: ast.stmt) -> set[int]:
    """The parameters a clipping statement clips, when its first argument is `module.parameters()`
    or a name bound to tensors; empty when that cannot be read without running code."""
    call = next((n for n in ast.walk(statement) if isinstance(n, ast.Call) and (
        isinstance(n.func, ast.Attribute) and n.func.attr in CLIP_CALLS
        or isinstance(n.func, ast.Name) and n.func.id in CLIP_CALLS)), None)
    first = call.args[0] if call is not None and call.args else None
    if isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "parameters" \
            and not first.args:
        module = value_of(frame, first.func.value)
        return {id(p) for p in module.parameters()} if isinstance(module, torch.nn.Module) else set()
    value = value_of(frame, first) if first is not None else None
    if isinstance(value, torch.Tensor):
        return {id(value)}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return {id(v) for v in value}
    return set()


def _optimizer_clipped_instead(frame, filename: str, block: list, statement: ast.stmt, call: ast.Call):
    """(text, step statement) of the optimizer the failing `scaler.unscale_(optimizer)` was meant
    for: the clipping right after it clips only parameters of another optimizer, which the same
    scaler steps later in the block. None otherwise."""
    if not call.args:
        return None
    unscaled = value_of(frame, call.args[0])
    clipping = _clipping_after(block, block.index(statement))
    clipped = set().union(*(_clipped_parameter_ids(frame, filename, s) for s in clipping)) if clipping else set()
    if unscaled is None or not clipped or clipped & _parameter_ids(unscaled):
        return None
    scaler = value_of(frame, call.func.value)
    for later in block[block.index(statement) + 1:]:
        step = _method_call(later, "step")
        if step is None or not step.args or value_of(frame, step.func.value) is not scaler:
            continue
        other = value_of(frame, step.args[0])
        if other is not None and other is not unscaled and clipped <= _parameter_ids(other):
            return segment(filename, step.args[0]), later
    return None


def _caller_after_step(context: ErrorContext, frame, call: ast.Call):
    """(filename, block, statement, step statement, scaler text) for the first caller of the
    failing frame whose statement comes after a `scaler.step(...)` of the same scaler in its block."""
    scaler = value_of(frame, call.func.value)
    callers = [found for found in context.user_frames() if found[0] is not frame]
    for caller, line in callers:
        filename = caller.f_code.co_filename
        tree = parse_file(filename)
        scope = enclosing_function(tree, line) if tree is not None else None
        statement = next((node for node in ast.walk(scope) if isinstance(node, ast.stmt)
                          and node.lineno == line and not isinstance(node, (ast.For, ast.While, ast.If, ast.With))),
                         None) if scope is not None else None
        block = block_holding(scope, statement) if statement is not None else None
        if block is None:
            continue
        steps = [s for s in block[:block.index(statement)] if _method_call(s, "step") is not None
                 and value_of(caller, s.value.func.value) is scaler]
        if steps:
            return filename, block, statement, steps[-1], segment(filename, steps[-1].value.func.value)
    return None


def _step_inside_exiting_with(context: ErrorContext, frame, call: ast.Call):
    """(filename, step statement, scaler text, help) when the failing unscale_() runs in a context
    manager's exit (an `__exit__` method, or the code after `yield` of a contextlib.contextmanager
    generator), left by the caller's `with` block whose last statement is `scaler.step(...)` of the same scaler: the exit
    unscales (and clips) after that step. The help moves the step below the block, so it applies the
    gradients the exit unscaled and clipped; every statement before it in the block still runs first.
    None otherwise (the block does more after the step, or steps more than once)."""
    if not _runs_at_block_exit(frame, call):
        return None
    scaler = value_of(frame, call.func.value)
    callers = [found for found in context.user_frames() if found[0] is not frame]
    if not callers:
        return None
    caller, line = callers[0]  # innermost first: the frame whose `with` block exited
    filename = caller.f_code.co_filename
    tree = parse_file(filename)
    blocks = [node for node in ast.walk(tree) if isinstance(node, ast.With) and node.lineno == line] \
        if tree is not None else []
    if len(blocks) != 1 or len(blocks[0].body) < 2:
        return None
    block, step = blocks[0], blocks[0].body[-1]
    if _method_call(step, "step") is None or value_of(caller, step.value.func.value) is not scaler or any(
            _method_call(s, method) is not None for s in blocks[0].body[:-1] for method in ("step", "update")):
        return None
    with_indent = source_line(filename, block.lineno)[:block.col_offset]
    body_indent = source_line(filename, step.lineno)[:step.col_offset]
    kept = [source_line(filename, number).rstrip() for number in range(block.lineno, step.lineno)]
    moved = [source_line(filename, number).rstrip() for number in range(step.lineno, step.end_lineno + 1)]
    if any(line_text.strip() and not line_text.startswith(with_indent) for line_text in kept) or \
            any(not line_text.startswith(body_indent) for line_text in moved):
        return None
    while kept and not kept[-1].strip():
        kept.pop()
    lines = [text[len(with_indent):] for text in kept] + [text[len(body_indent):] for text in moved]
    location = statement_location(filename, block)
    location.end_line, location.end_column = block.end_lineno, block.end_col_offset
    receiver = segment(filename, step.value.func.value)
    help_ = Suggestion(f"call {receiver}.step() after the with block: the block's exit unscales the gradients (and "
                       f"clips them, where it does), and {receiver}.step() must apply them after that",
                       "\n".join(lines), location)
    return filename, step, receiver, help_


def _runs_at_block_exit(frame, call: ast.Call) -> bool:
    """Whether `call` runs in a context manager's exit: `frame` is an `__exit__` method, or a
    generator whose call comes after a `yield` of its own (the exit of contextlib.contextmanager;
    the code before the yield is the block's entry)."""
    if frame.f_code.co_name == "__exit__":
        return True
    if not frame.f_code.co_flags & inspect.CO_GENERATOR:
        return False
    tree = parse_file(frame.f_code.co_filename)
    function = enclosing_function(tree, call.lineno) if tree is not None else None
    return function is not None and any(isinstance(node, (ast.Yield, ast.YieldFrom)) and node.lineno < call.lineno
                                        for node in ast.walk(function))


def _caller_unscaling_every_optimizer(context: ErrorContext, frame, call: ast.Call):
    """(filename, caller statement, step statement, scaler text, help) for a caller statement in
    the body of `for X in OPTIMIZERS:` that hands the whole list `OPTIMIZERS` (the very object the
    loop runs over) to the helper that unscales, followed in the body by `scaler.step(X)`: the
    helper unscales every optimizer at each pass, so from the second pass on it unscales one
    already stepped. The help runs it once, before the loop. None otherwise."""
    scaler = value_of(frame, call.func.value)
    for caller, line in (found for found in context.user_frames() if found[0] is not frame):
        filename = caller.f_code.co_filename
        tree = parse_file(filename)
        if tree is None:
            continue
        loops = [node for node in ast.walk(tree) if isinstance(node, ast.For) and isinstance(node.target, ast.Name)
                 and not node.orelse and any(s.lineno == line for s in node.body)]
        if len(loops) != 1:
            continue
        loop = loops[0]
        statement = next(s for s in loop.body if s.lineno == line)
        target, listed = loop.target.id, value_of(caller, loop.iter)
        caller_call = statement.value if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            else None
        if caller_call is None or listed is None or isinstance(listed, (str, bytes)) \
                or any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(statement)) \
                or not any(value_of(caller, argument) is listed for argument in caller_call.args):
            continue
        later = loop.body[loop.body.index(statement) + 1:]
        steps = [s for s in later if (c := _method_call(s, "step")) is not None and value_of(caller, c.func.value) is scaler
                 and c.args and isinstance(c.args[0], ast.Name) and c.args[0].id == target]
        if len(steps) != 1:
            continue
        receiver = segment(filename, steps[0].value.func.value)
        help_ = _hoist_before_loop(filename, loop, statement, receiver, segment(filename, loop.iter))
        if help_ is None:
            return None
        help_ = Suggestion(f"call {segment(filename, statement)} once, before the loop: it unscales (and clips) every "
                           f"optimizer of {segment(filename, loop.iter)}, so inside the loop it unscales again the "
                           f"ones already stepped", help_.replacement, help_.location)
        return filename, statement, steps[0], receiver, help_
    return None


def _clipping_after(block: list, start: int) -> list:
    """The statements right after `block[start]` that only clip gradients."""
    moved = []
    for following in block[start + 1:]:
        if not isinstance(following, ast.Expr) or not any(
                isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in CLIP_CALLS
                                             or isinstance(n.func, ast.Name) and n.func.id in CLIP_CALLS)
                for n in ast.walk(following)):
            break
        moved.append(following)
    return moved


def _move_before_step(filename: str, block: list, unscale: ast.stmt, step: ast.stmt, receiver: str
                      ) -> Suggestion | None:
    """The statements from `step` to the clipping after `unscale` rewritten with the unscale_ and
    its clipping first: the same statements, in the order GradScaler needs."""
    start = block.index(unscale)
    moved = [unscale] + _clipping_after(block, start)
    between = block[block.index(step):start]
    indent = source_line(filename, step.lineno)[:step.col_offset]

    def lines_of(statements):
        return [source_line(filename, number).rstrip() for statement in statements
                for number in range(statement.lineno, statement.end_lineno + 1)]
    text_lines = lines_of(moved) + lines_of(between)
    if any(line.strip() and not line.startswith(indent) for line in text_lines):
        return None
    location = statement_location(filename, step)
    location.end_line, location.end_column = moved[-1].end_lineno, moved[-1].end_col_offset
    text = "\n".join(line[len(indent):] for line in text_lines)
    return Suggestion(f"unscale and clip before {receiver}.step(), so that the clipped gradients are the ones "
                      "step() applies", text, location)


def stepped_twice(context: ErrorContext, already):
    found = _grad_scaler_call(context, "step")
    if found is None:
        return None
    _frame, filename, statement, location, _call, receiver, optimizer_text = found
    location.role, location.note = "step", f"{receiver}.step({optimizer_text}) runs again before {receiver}.update()"
    scope = _function_around(filename, statement)
    updates = [node for node in ast.walk(scope) if isinstance(node, ast.stmt) and _method_call(node, "update")
               is not None and segment(filename, node.value.func.value) == receiver] if scope is not None else []
    notes = [f"after {receiver}.step({optimizer_text}), GradScaler refuses another step() of that optimizer until "
             f"{receiver}.update() has adjusted the loss scale: update() runs once per iteration, after the steps"]
    related = []
    earlier = _earlier_step(scope, filename, statement, receiver) if scope is not None else None
    if earlier is not None:
        # Two steps of one optimizer in one block (a step after each of two losses): the update()
        # that lets the second one run goes right after the first.
        indent = source_line(filename, earlier.lineno)[:earlier.col_offset]
        step_text = "\n".join(source_line(filename, number).rstrip()[len(indent):]
                              for number in range(earlier.lineno, earlier.end_lineno + 1))
        related = [statement_location(filename, earlier, role="step", note=f"the earlier {receiver}.step() of this "
                                      f"iteration, with no {receiver}.update() after it")]
        helps = [Suggestion(f"call {receiver}.update() after each {receiver}.step({optimizer_text}), so that every "
                            "step is followed by its update", f"{step_text}\n{receiver}.update()",
                            statement_location(filename, earlier)),
                 Suggestion(f"or step once per iteration: add the losses, call backward() once, then "
                            f"{receiver}.step({optimizer_text}) and {receiver}.update()")]
        return diagnosis(codes.STEP_BEFORE_UPDATE, location, related=related, notes=notes, help=helps)
    other = _other_step_without_update(filename, scope, statement, receiver) if updates else None
    if other is not None:
        # The failing step() is followed by its update() where it is written, so the step that ran
        # before it without an update is the file's one other step() of this scaler, in a function
        # that never calls update() (an end-of-epoch flush, a warm-up step): the update() belongs there.
        other_location = statement_location(filename, other, role="step", note=f"this {receiver}.step() is not "
                                            f"followed by {receiver}.update(); the next step() is refused")
        location.note = f"{receiver}.step({optimizer_text}) is refused: the previous step ran without an update() after it"
        indent = source_line(filename, other.lineno)[:other.col_offset]
        step_text = "\n".join(source_line(filename, number).rstrip()[len(indent):]
                              for number in range(other.lineno, other.end_lineno + 1))
        notes.append(f"{receiver}.step({optimizer_text}) at line {statement.lineno} is followed by {receiver}.update(); "
                     f"the step at line {other.lineno}, in a function that never calls {receiver}.update(), is not")
        helps = [Suggestion(f"call {receiver}.update() after this {receiver}.step() too: every step is followed by "
                            "its update", f"{step_text}\n{receiver}.update()", statement_location(filename, other))]
        return diagnosis(codes.STEP_BEFORE_UPDATE, other_location, related=[location], notes=notes, help=helps)
    skipping = _continue_skipping_update(filename, scope, statement, receiver) if updates else None
    if skipping is not None:
        # step() and update() in one loop body, and a `continue` between them: the passes that take
        # it step without an update, and the next pass's step() is refused. The update belongs
        # before that continue too.
        skip, update = skipping
        primary = statement_location(filename, skip, role="skip", note=f"continue skips {receiver}.update() at line "
                                     f"{update.lineno}: the next pass steps again without an update")
        notes.append(f"{receiver}.step({optimizer_text}) at line {statement.lineno} runs before this continue, "
                     f"{receiver}.update() at line {update.lineno} only on the passes that do not take it")
        helps = [Suggestion(f"call {receiver}.update() before this continue too: every step is followed by its "
                            "update, on the passes that continue as on the others",
                            f"{receiver}.update()\ncontinue",
                            statement_location(filename, skip))]
        return diagnosis(codes.STEP_BEFORE_UPDATE, primary, related=[location], notes=notes, help=helps)
    if updates:
        related = [statement_location(filename, update, role="update", note=f"{receiver}.update() did not run "
                                      "between the two steps") for update in updates]
        helps = [Suggestion(f"call {receiver}.update() after every {receiver}.step(): once per iteration, "
                            "after the steps of all optimizers")]
        moved = _move_step_into_update_block(filename, scope, statement, receiver)
        if moved is not None:
            # update() (with zero_grad()) runs under a condition (every N micro-batches of gradient
            # accumulation) and step() does not: the step belongs with them.
            notes.append(f"{receiver}.update() runs only when the condition at line {moved[0].lineno} holds (a step "
                         f"every N micro-batches), while {receiver}.step({optimizer_text}) runs on every pass")
            # The original run stepped after the first micro-batch already (the step this change
            # removes), so the values handed to the backward() before the refused step were computed
            # at weights that step changed: stale by construction, as for a recomputed forward.
            helps.insert(0, Suggestion(f"step under the same condition as {receiver}.update(), just before it: the "
                                       "gradients accumulated over the micro-batches are applied once",
                                       moved[1], moved[2], recomputes_failing_forward=True))
        else:
            after_loop = _update_after_stepping_loop(filename, scope, statement, receiver)
            if after_loop is not None:
                # step() in every pass of a loop (one per task, one per loss) and update() once after
                # it: the update belongs after each step, inside the loop.
                update, loop, text, span = after_loop
                primary = statement_location(filename, update, role="update", note=f"{receiver}.update() runs once, "
                                             f"after the loop at line {loop.lineno} that steps in every pass")
                notes.append(f"the loop at line {loop.lineno} calls {receiver}.step({optimizer_text}) in every pass, "
                             f"and {receiver}.update() runs only after the loop ends")
                helps.insert(0, Suggestion(f"call {receiver}.update() right after {receiver}.step({optimizer_text}), "
                                           "inside the loop, and not again after it: every step is followed by its "
                                           "update", text, span))
                return diagnosis(codes.STEP_BEFORE_UPDATE, primary, related=[location], notes=notes, help=helps)
            taken_out = _update_out_of_condition(filename, scope, statement, receiver)
            if taken_out is not None:
                # update() sits under a condition that gradients are not accumulated under (a logging
                # `if`), while step() runs every iteration: update() belongs after every step.
                update, text, holder_location = taken_out
                primary = statement_location(filename, update, role="update", note=f"{receiver}.update() runs only "
                                             f"when the condition at line {_update_holder_line(update, scope)} holds")
                helps.insert(0, Suggestion(f"call {receiver}.update() after every {receiver}.step(): take it out of "
                                           "the condition, to the end of the iteration", text, holder_location))
                return diagnosis(codes.STEP_BEFORE_UPDATE, primary, related=[location], notes=notes, help=helps)
            inner = _loop_of_whole_steps(filename, scope, statement, receiver, optimizer_text)
            if inner is not None:
                # n_critic steps of one optimizer in an inner loop, each pass a whole step of its own
                # (zero_grad, backward, step), and update() only later in the outer iteration (after
                # another optimizer's step): the update belongs after each of those steps too.
                step_text = segment(filename, statement)  # the statement without its trailing comment
                notes.append(f"the loop at line {inner.lineno} steps {optimizer_text} in every pass (each pass zeroes "
                             f"its gradients first), and {receiver}.update() runs only after that loop")
                helps.insert(0, Suggestion(f"call {receiver}.update() after this {receiver}.step() too, inside the "
                                           "loop: every step is followed by its update",
                                           f"{step_text}\n{receiver}.update()", statement_location(filename, statement)))
    elif elsewhere := _updates_elsewhere(filename, scope, receiver):
        # update() exists, in another function (an epoch-end hook): adding one after the step would
        # leave that one running with no step before it, which GradScaler refuses too.
        related = [statement_location(filename, update, role="update", note=f"{receiver}.update() is called here, "
                                      "less often than the step") for update in elsewhere]
        notes.append(f"{receiver}.update() is called in another function, which does not run after every step")
        helps = [Suggestion(f"move {receiver}.update() to right after {receiver}.step({optimizer_text}): once per "
                            "iteration, and nowhere else")]
    else:
        indent = source_line(filename, statement.lineno)[:statement.col_offset]
        step_text = "\n".join(source_line(filename, number).rstrip()[len(indent):]
                              for number in range(statement.lineno, statement.end_lineno + 1))
        helps = [Suggestion(f"call {receiver}.update() after {receiver}.step(): it adjusts the loss scale for the "
                            "next iteration and lets the next step() run", f"{step_text}\n{receiver}.update()",
                            statement_location(filename, statement))]
        notes.append(f"{receiver}.update() is called nowhere in this function")
    return diagnosis(codes.STEP_BEFORE_UPDATE, location, related=related, notes=notes, help=helps)


def _continues_of_loop(node: ast.AST) -> list[ast.Continue]:
    """The `continue` statements under `node` that continue the loop around it (not a nested loop's;
    not inside a nested function)."""
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Continue):
            found.append(child)
        elif not isinstance(child, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                    ast.Lambda, ast.ClassDef)):
            found.extend(_continues_of_loop(child))
    return found


def _continue_skipping_update(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """(the continue, the update() statement) when `step` and a later `receiver.update()` are statements
    of one loop body and exactly one `continue` of that loop lies between them, in a statement that
    calls nothing of the scaler: the passes that take it skip the update. None otherwise."""
    block = block_holding(scope, step) if scope is not None else None
    if block is None or not any(isinstance(node, (ast.For, ast.While)) and node.body is block
                                for node in ast.walk(scope)):
        return None
    position = block.index(step)
    update = next((s for s in block[position + 1:] if _is_update_of(filename, s, receiver)), None)
    if update is None:
        return None
    between = block[position + 1:block.index(update)]
    if any(_calls(s, method, receiver, filename) for s in between for method in ("step", "unscale_", "update")):
        return None
    continues = [found for s in between for found in _continues_of_loop(s)]
    return (continues[0], update) if len(continues) == 1 else None


def _other_step_without_update(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """The file's one other `receiver.step(...)` statement, when the failing `step` is directly
    followed by `receiver.update()` in its block (so the step that ran before it and left no update
    is not this one) and that other step's function calls no `receiver.update()` at all. None when
    there is no such step, or more than one candidate (which ran last is not known)."""
    tree = parse_file(filename)
    block = block_holding(scope, step) if scope is not None else None
    if tree is None or block is None:
        return None
    position = block.index(step)
    if position + 1 >= len(block) or not _is_update_of(filename, block[position + 1], receiver):
        return None
    others = [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and node is not step
              and _method_call(node, "step") is not None and segment(filename, node.value.func.value) == receiver]
    if len(others) != 1:
        return None
    around = _function_around(filename, others[0])
    if around is None or around is tree or around is scope or _calls(around, "update", receiver, filename):
        return None
    return others[0]


def _is_update_of(filename: str, statement: ast.stmt, receiver: str) -> bool:
    return _method_call(statement, "update") is not None and segment(filename, statement.value.func.value) == receiver


def _later_update_block(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """(the later statements of the block holding `step`, the first `if` among them (no else) whose
    body calls `receiver.update()`, that update() statement), when nothing between the step and
    that `if` steps, unscales or updates through the scaler; None otherwise."""
    block = block_holding(scope, step) if scope is not None else None
    if block is None:
        return None
    later = block[block.index(step) + 1:]
    holder = next((s for s in later if isinstance(s, ast.If) and not s.orelse
                   and any(_is_update_of(filename, b, receiver) for b in s.body)), None)
    if holder is None or any(_calls(s, method, receiver, filename) for s in later[:later.index(holder)]
                             for method in ("step", "unscale_", "update")):
        return None
    return holder, next(b for b in holder.body if _is_update_of(filename, b, receiver))


def _move_step_into_update_block(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """(the `if`, its rewritten text from `step` on, location) when `receiver.update()` and zero_grad()
    are in the body of an `if` that comes later in the block holding `step` (gradient accumulation):
    the step moved to just before that update(). None otherwise (or when a statement between them
    uses the scaler)."""
    found = _later_update_block(filename, scope, step, receiver)
    if found is None:
        return None
    holder, update = found
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad"
               for n in ast.walk(holder)):
        return None  # gradients are not accumulated under that condition: which rate is meant is not known
    indent = source_line(filename, step.lineno)[:step.col_offset]
    update_indent = source_line(filename, update.lineno)[:update.col_offset]
    step_lines = [source_line(filename, n).rstrip() for n in range(step.lineno, step.end_lineno + 1)]
    lines = []
    for number in range(step.end_lineno + 1, holder.end_lineno + 1):
        if number == update.lineno:
            lines += [update_indent + line[len(indent):] for line in step_lines]
        lines.append(source_line(filename, number).rstrip())
    if any(line.strip() and not line.startswith(indent) for line in lines + step_lines):
        return None
    location = statement_location(filename, step)
    location.end_line, location.end_column = holder.end_lineno, holder.end_col_offset
    return holder, "\n".join(line[len(indent):] for line in lines), location


def _update_after_stepping_loop(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """(the update() statement, the loop, the text from `step` to the loop's end with update() after
    the step, the span from `step` through that update()) when `step` is a statement of a `for`
    loop's body whose next statement, in the block around the loop, is `receiver.update()`, and the
    loop neither updates nor unscales through the scaler. None otherwise."""
    if scope is None:
        return None
    loop = next((node for node in ast.walk(scope) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))
                 and step in node.body and not node.orelse), None)
    block = block_holding(scope, loop) if loop is not None else None
    if block is None or block.index(loop) + 1 >= len(block):
        return None
    update = block[block.index(loop) + 1]
    if not _is_update_of(filename, update, receiver) or any(
            _calls(node, method, receiver, filename) for node in loop.body for method in ("update", "unscale_")):
        return None
    indent = source_line(filename, step.lineno)[:step.col_offset]
    lines = [source_line(filename, n).rstrip() for n in range(step.lineno, loop.end_lineno + 1)]
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    step_lines = step.end_lineno - step.lineno + 1
    lines = lines[:step_lines] + textwrap.indent(segment(filename, update), indent).split("\n") + lines[step_lines:]
    span = statement_location(filename, step)
    span.end_line, span.end_column = update.end_lineno, update.end_col_offset
    return update, loop, "\n".join(line[len(indent):] for line in lines), span


def _loop_of_whole_steps(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str, optimizer_text: str):
    """The loop whose own body holds `step` and `<optimizer>.zero_grad()` of the stepped optimizer (each
    pass a whole step, not one micro-batch of accumulation), with no update() or unscale_() of the
    scaler in it, when the scaler's update() is called in the function after that loop. None otherwise."""
    if scope is None:
        return None
    loop = next((node for node in ast.walk(scope) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))
                 and step in node.body), None)
    if loop is None or any(_calls(node, method, receiver, filename) for node in loop.body
                           for method in ("update", "unscale_")):
        return None
    zeroes = any(_method_call(node, "zero_grad") is not None
                 and segment(filename, node.value.func.value) == optimizer_text for node in loop.body)
    later = any(_is_update_of(filename, node, receiver) and node.lineno > loop.end_lineno
                for node in ast.walk(scope) if isinstance(node, ast.stmt))
    return loop if zeroes and later else None


def _update_holder_line(update: ast.stmt, scope: ast.AST) -> int | None:
    """The line of the `if` whose body holds `update`."""
    return next((node.lineno for node in ast.walk(scope) if isinstance(node, ast.If) and update in node.body), None)


def _update_out_of_condition(filename: str, scope: ast.AST | None, step: ast.stmt, receiver: str):
    """(the update() statement, the rewritten `if` with update() after it, the `if`'s location) when
    `receiver.update()` is in the body of an `if` (no else, no zero_grad(): not gradient accumulation)
    later in the block that steps on every pass. None otherwise."""
    found = _later_update_block(filename, scope, step, receiver)
    if found is None:
        return None
    holder, update = found
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("zero_grad", "step")
           for n in ast.walk(holder)):
        return None
    indent = source_line(filename, holder.lineno)[:holder.col_offset]
    kept = [source_line(filename, number).rstrip() for number in range(holder.lineno, holder.end_lineno + 1)
            if not update.lineno <= number <= update.end_lineno]
    if len(holder.body) == 1 or any(line.strip() and not line.startswith(indent) for line in kept):
        return None
    update_text = segment(filename, update)
    lines = [line[len(indent):] for line in kept] + [update_text]
    location = statement_location(filename, holder)
    return update, "\n".join(lines), location


def _updates_elsewhere(filename: str, scope: ast.AST | None, receiver: str) -> list[ast.stmt]:
    """The `receiver.update()` statements of the file outside `scope`, the function that steps."""
    tree = parse_file(filename)
    if tree is None or scope is None:
        return []
    inside = {id(node) for node in ast.walk(scope)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and id(node) not in inside
            and _method_call(node, "update") is not None and segment(filename, node.value.func.value) == receiver]


def _earlier_step(scope: ast.AST, filename: str, statement: ast.stmt, receiver: str) -> ast.stmt | None:
    """The last `receiver.step(...)` statement before `statement` in the same block with no
    `receiver.update()` between them; None when there is none."""
    block = block_holding(scope, statement)
    if block is None:
        return None
    earlier = None
    for candidate in block[:block.index(statement)]:
        if _method_call(candidate, "step") is not None and segment(filename, candidate.value.func.value) == receiver:
            earlier = candidate
        elif _calls(candidate, "update", receiver, filename):
            earlier = None  # an update() after that step: it is not the one left without one
    return earlier


_HALF = (torch.float16,)


def float16_gradients(context: ErrorContext, already):
    found = _grad_scaler_call(context, "unscale_") or _grad_scaler_call(context, "step")
    if found is None:
        return None
    frame, filename, statement, location, call, receiver, optimizer_text = found
    optimizer = value_of(frame, call.args[0]) if call.args else None
    groups = getattr(optimizer, "param_groups", None) or []
    half = {id(p) for group in groups for p in group.get("params", ()) if getattr(p, "dtype", None) in _HALF}
    if not half:
        return None
    location.role, location.note = "unscale", f"{receiver} refuses the float16 gradients of {optimizer_text}"
    modules = _modules_holding(frame, half)
    tree = parse_file(filename)
    cast = _float16_cast(tree, filename, frame, modules) if tree is not None else None
    cast_file = filename
    if cast is None and tree is not None:
        in_helper = _float16_cast_in_called_helper(tree, filename, frame, modules)
        if in_helper is not None:
            cast_file, cast = in_helper
    notes = [f"{optimizer_text} steps float16 parameters, so their gradients are float16: GradScaler unscales only "
             "float32 gradients, since mixed precision keeps the trained parameters in float32 (autocast runs the "
             "forward in float16 for speed)"]
    if cast is None:
        in_class = _float16_cast_in_module_class(frame, modules, half)
        if in_class is not None:
            cast_file, cast = in_class
    if cast is None:
        recorded = _recorded_cast(half, optimizer_text, location, notes)
        if recorded is not None:
            return recorded
        made = _float16_factory(frame, modules, half)
        if made is not None:
            made_file, made_statement, dtype_node, name = made
            primary = statement_location(made_file, made_statement, role="made",
                                         note=f"{name} is created in float16 here (dtype=), and {optimizer_text} "
                                         "trains it")
            help_ = Suggestion(f"create {name}, which is trained, in float32: its gradients are then float32, as "
                               "GradScaler needs; for float16 compute, run the forward under "
                               "torch.autocast(device_type, dtype=torch.float16)",
                               replace_node_text(made_file, made_statement, dtype_node, "torch.float32"),
                               statement_location(made_file, made_statement))
            return diagnosis(codes.FLOAT16_GRADIENTS, primary, related=[location], notes=notes, help=[help_])
        pretrained = _float16_pretrained_table(frame, modules, half)
        if pretrained is not None:
            made_file, made_statement, table_node, name = pretrained
            table = segment(made_file, table_node)
            primary = statement_location(made_file, made_statement, role="made",
                                         note=f"{name} takes {table}, a float16 tensor, as its weight here "
                                         f"(from_pretrained keeps its dtype), and {optimizer_text} trains it")
            help_ = Suggestion(f"give {name}, which is trained, a float32 copy of {table}: its gradients are then "
                               "float32, as GradScaler needs; for float16 compute, run the forward under "
                               "torch.autocast(device_type, dtype=torch.float16)",
                               replace_node_text(made_file, made_statement, table_node, f"{table}.float()"),
                               statement_location(made_file, made_statement))
            return diagnosis(codes.FLOAT16_GRADIENTS, primary, related=[location], notes=notes, help=[help_])
        names = ", ".join(modules) if modules else f"the model {optimizer_text} trains"
        return diagnosis(codes.FLOAT16_GRADIENTS, location, notes=notes, help=[Suggestion(
            f"keep the parameters of {names} in float32 (no .half() or .to(torch.float16) on the trained model); "
            "to compute in float16, run the forward under torch.autocast(device_type, dtype=torch.float16)")])
    if cast_file == filename and _cast_ran_before_float32_steps(tree, statement, cast[0], optimizer, half):
        # The optimizer's own state shows these parameters were float32 at a step() of the loop,
        # and this cast ran once, before the loop: another cast, during the loop, made them float16.
        recorded = _recorded_cast(half, optimizer_text, location, notes)
        if recorded is not None:
            return recorded
        notes.append(f"{optimizer_text} stepped these parameters in float32 earlier in the loop (its state for "
                     f"them is float32), so the cast at line {cast[0].lineno} before the loop is not what made "
                     "them float16: something in the loop cast them after a step (a .to(dtype=torch.float16) "
                     "or .half() of a module that holds them, such as a validation or export pipeline built "
                     "around the trained model)")
        names = ", ".join(modules) if modules else f"the model {optimizer_text} trains"
        return diagnosis(codes.FLOAT16_GRADIENTS, location, notes=notes, help=[Suggestion(
            f"find the call in the loop that casts {names} to float16 after a step and leave its parameters in "
            "float32 there (move it without dtype=, or cast the trained parameters back to float32 after it)")])
    cast_statement, cast_node, new_text, name = cast
    name = name or (modules[0] if modules else "the model")
    assigned = isinstance(cast_node, ast.Constant) and cast_node.value is True
    default = isinstance(cast_statement, ast.Expr) and isinstance(cast_statement.value, ast.Call) and \
        getattr(cast_statement.value.func, "attr", None) == "set_default_dtype"
    how = ("takes the state dict's float16 tensors as its parameters here (assign=True)" if assigned
           else "is made under this default dtype, float16" if default else "is cast to float16 here")
    primary = statement_location(cast_file, cast_statement, role="cast",
                                 note=f"{name} {how}, the parameters {optimizer_text} trains")
    help_ = Suggestion(f"keep {name}, which is trained, in float32: its gradients are then float32, as GradScaler "
                       "needs; for float16 compute, run the forward under torch.autocast(device_type, "
                       "dtype=torch.float16)", replace_node_text(cast_file, cast_statement, cast_node, new_text),
                       statement_location(cast_file, cast_statement))
    return diagnosis(codes.FLOAT16_GRADIENTS, primary, related=[location], notes=notes, help=[help_])


# Callers followed outwards from a recorded cast while the dtype it was given is their caller's choice.
MAX_CAST_CALLERS = 4


def _recorded_cast(half: set, optimizer_text: str, unscale: Location, notes: list[str]):
    """AD151 at the call that cast the trained parameters to float16, from the run's record
    (recording/module_casts.py: `Module.to/half/bfloat16` calls that changed these very parameters'
    dtype, with the user's stack). From the `.to(..., dtype=name)` call, while `name` is a parameter
    of the enclosing function that has a default (the function casts only when its caller asks),
    the caller's call that passes it is followed: the line to change is the one that chose the
    dtype (diffusers PR 13895: `pipeline.to(device, dtype=torch_dtype)` in `log_validation`, whose
    `Pipeline.to` forwards `dtype` to the shared UNet). The help drops that `dtype=` keyword, so
    the parameters stay float32; for a `.half()` or a positional dtype, the line is named with
    advice. None when no recorded cast changed one of the parameters, or its site is not in a
    readable user file."""
    from autograd_doctor.recording import module_casts

    record = module_casts.last_cast_of(half)
    if record is None or not record.stack:
        return None
    sites = list(record.stack)
    chosen = None  # (site, statement, call, keyword)
    wanted = "dtype"
    for depth, site in enumerate(sites[:MAX_CAST_CALLERS]):
        statement = statement_at(site.filename, site.lineno)
        if statement is None:
            break
        calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
        if depth == 0:
            calls = [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr in ("to", "half", "bfloat16")]
        keyword = next((k for c in calls for k in c.keywords if k.arg == wanted), None)
        call = next((c for c in calls if keyword is not None and keyword in c.keywords), calls[0] if calls else None)
        if call is None:
            break
        chosen = (site, statement, call, keyword)
        if keyword is None or not isinstance(keyword.value, ast.Name):
            break
        parameter = _parameter_with_default(site.filename, site.code, keyword.value.id)
        if not parameter or depth + 1 >= len(sites):
            break
        wanted = keyword.value.id
    if chosen is None:
        return None
    site, statement, call, keyword = chosen
    dtype_name = "bfloat16" if record.dtype == torch.bfloat16 else "float16"
    primary = statement_location(site.filename, statement, role="cast",
                                 note=f"this call casts the parameters {optimizer_text} trains to {dtype_name}")
    related = [unscale]
    if site is not sites[0]:
        inner = statement_at(sites[0].filename, sites[0].lineno)
        if inner is not None:
            related.insert(0, statement_location(sites[0].filename, inner, role="cast",
                                                 note=f"the module holding them is cast here, with the dtype given at "
                                                 f"line {site.lineno}"))
    count = sum(1 for ref in record.parameters if id(ref()) in half)
    notes.append(f"the run recorded the cast: the call at line {site.lineno} turned {count} of the parameters "
                 f"{optimizer_text} trains into {dtype_name} (a pipeline or wrapper built around the trained model "
                 "holds the same module: casting it casts the trained parameters)")
    helps = []
    if keyword is not None:
        new_call = _without_keyword(site.filename, call, keyword)
        if new_call is not None:
            helps.append(Suggestion(
                f"leave out dtype= here: the module keeps the trained parameters in float32, as GradScaler needs "
                f"(its forward can still compute in {dtype_name} under torch.autocast)",
                replace_node_text(site.filename, statement, call, new_call), statement_location(site.filename, statement)))
    helps.append(Suggestion(f"keep the trained parameters in float32 at this call (leave out the dtype, or cast the "
                            f"trained parameters back to float32 after it)"))
    return diagnosis(codes.FLOAT16_GRADIENTS, primary, related=related, notes=notes, help=helps)


def _parameter_with_default(filename: str, code, name: str) -> bool:
    """Whether `name` is a parameter with a default of the function of `code`."""
    tree = parse_file(filename)
    function = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == code.co_name
                     and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == code.co_firstlineno), None) if tree is not None else None
    if function is None:
        return False
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    with_defaults = positional[len(positional) - len(arguments.defaults):] if arguments.defaults else []
    with_defaults += [a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    return any(a.arg == name for a in with_defaults)


def _without_keyword(filename: str, call: ast.Call, keyword: ast.keyword) -> str | None:
    """The call's text with `keyword` (and its comma) left out; None when the text is not found."""
    import re

    text, kept = segment(filename, call), segment(filename, keyword)
    if not text or not kept:
        return None
    for pattern in (r",\s*" + re.escape(kept), re.escape(kept) + r"\s*,\s*", re.escape(kept)):
        changed, count = re.subn(pattern, "", text, count=1)
        if count:
            return changed
    return None


def _cast_ran_before_float32_steps(tree, failing: ast.stmt, cast_statement: ast.stmt, optimizer,
                                   half: set) -> bool:
    """Whether run-time evidence shows `cast_statement` did not make the parameters float16: it runs
    once, before the loop that holds the failing call (not inside that loop, earlier in the file),
    and the optimizer's state holds float32 tensors of the parameters' shape for a parameter that
    is float16 now (Adam's moments, SGD's momentum are made in the parameter's dtype at its first
    step), so that parameter was float32 at a step inside the loop, after the cast."""
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While))
             and node.lineno <= failing.lineno <= (node.end_lineno or node.lineno)]
    if not loops:
        return False
    outer = min(loops, key=lambda node: node.lineno)
    if not cast_statement.lineno < outer.lineno:
        return False
    if any(cast_statement in list(ast.walk(node)) for node in ast.walk(tree)
           if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef))):
        return False  # a cast in a loop or a function may run again, later
    state = getattr(optimizer, "state", None) or {}
    for group in getattr(optimizer, "param_groups", None) or []:
        for parameter in group.get("params", ()):
            if id(parameter) not in half:
                continue
            values = state.get(parameter, {}) if isinstance(state, dict) else {}
            if any(isinstance(v, torch.Tensor) and v.dtype == torch.float32 and v.shape == parameter.shape
                   for v in values.values()):
                return True
    return False


def _modules_holding(frame, parameter_ids: set) -> list[str]:
    """Names of the frame's modules (locals, then globals) that hold one of the parameters."""
    names = []
    scopes = [frame.f_locals] + ([frame.f_globals] if frame.f_globals is not frame.f_locals else [])
    for scope in scopes:
        for name, value in list(scope.items()):
            if isinstance(value, torch.nn.Module) and name not in names \
                    and any(id(p) in parameter_ids for p in value.parameters()):
                names.append(name)
    return names


def _float16_factory(frame, modules: list[str], half: set):
    """(file, statement, dtype value, name) of `self.head = nn.Linear(..., dtype=torch.float16)`: a
    submodule of one of `modules` holding float16 parameters, created in float16 by its class."""
    from autograd_doctor.analysis.errors.context import module_attribute_assignment

    for name, _module, parent, attribute in _float16_submodules(frame, modules, half, own=True):
        made_file, statement = module_attribute_assignment(parent, attribute)
        for call in (n for n in ast.walk(statement.value) if isinstance(n, ast.Call)) if statement else ():
            for keyword in call.keywords:
                if keyword.arg == "dtype" and (value_of(frame, keyword.value) in _HALF or ast.unparse(
                        keyword.value).split(".")[-1] in ("float16", "half")):
                    return made_file, statement, keyword.value, name
    return None


def _float16_pretrained_table(frame, modules: list[str], half: set):
    """(file, statement, table argument, name) of `self.embed = nn.Embedding.from_pretrained(vectors, ...)`:
    a submodule of one of `modules` holding float16 parameters, made by torch's from_pretrained, which
    takes the given tensor itself (its dtype included) as the weight."""
    from autograd_doctor.analysis.errors.context import module_attribute_assignment

    pretrained = (torch.nn.Embedding.from_pretrained.__func__, torch.nn.EmbeddingBag.from_pretrained.__func__)
    for name, module, parent, attribute in _float16_submodules(frame, modules, half, own=True):
        if getattr(type(module).from_pretrained, "__func__", None) not in pretrained:
            continue
        made_file, statement = module_attribute_assignment(parent, attribute)
        value = statement.value if statement is not None else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr == "from_pretrained" and value.args \
                and not isinstance(value.args[0], ast.Starred):
            return made_file, statement, value.args[0], name
    return None


def _float16_cast_in_module_class(frame, modules: list[str], half: set):
    """(file, the cast as _float16_cast gives it) when a submodule holding float16 parameters was cast
    by the class that builds it: at the end of its assignment (`self.prelu = nn.PReLU(c).to(torch.float16)`)
    or by a statement of that class (`self.visual_encoder.half()` in `__init__`). The outermost such
    submodule is taken: its cast is the one that made the parameters float16."""
    from autograd_doctor.analysis.errors.context import module_attribute_assignment

    for name, _module, parent, attribute in _float16_submodules(frame, modules, half, own=False):
        made_file, statement = module_attribute_assignment(parent, attribute)
        if statement is not None:
            cast = _float16_cast_of_value(frame, made_file, statement, statement.value, name)
            if cast is not None:
                return made_file, cast
        for class_file, statement in _class_statements(type(parent)):
            call = statement.value if isinstance(statement, ast.Expr) else None
            receiver = call.func.value if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
            if isinstance(receiver, ast.Attribute) and receiver.attr == attribute \
                    and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
                cast = _float16_cast_of_value(frame, class_file, statement, call, name)
                if cast is not None:
                    return class_file, cast
    return None


def _float16_submodules(frame, modules: list[str], half: set, own: bool):
    """(name, submodule, its parent, its attribute on the parent) of each submodule of one of
    `modules` (names in the frame) that holds float16 parameters (`half`, by id): parameters of
    its own (`own`), or anywhere below it. In `named_modules()` order, outermost first."""
    scope = {**frame.f_globals, **frame.f_locals}
    for module_name in modules:
        root = scope.get(module_name)
        for path, module in root.named_modules() if isinstance(root, torch.nn.Module) else ():
            if not path or not any(id(p) in half for p in module.parameters(recurse=not own)):
                continue
            parent_path, _, attribute = path.rpartition(".")
            parent = root.get_submodule(parent_path) if parent_path else root
            yield f"{module_name}.{path}", module, parent, attribute


def _float16_cast_of_value(frame, filename: str, statement: ast.stmt, call: ast.AST, name: str):
    """(statement, node, replacement text, name) when `call` is `X.half()`, `X.to(...float16...)` or
    `X.type(torch.float16)`: the node to replace and its float32 text; else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr == "half" and not call.args and not call.keywords:
        return statement, call, f"{segment(filename, call.func.value)}.float()", name
    if call.func.attr in ("to", "type"):
        for argument in list(call.args) + [k.value for k in call.keywords if k.arg in (None, "dtype")]:
            if _is_half(frame, argument):
                return statement, argument, "torch.float32", name
    return None


def _class_statements(cls):
    """(file, statement) of every statement in the definitions of `cls` and its bases written in the
    user's files (not an installed package's)."""
    from autograd_doctor.recording.frames import in_installed_package

    for klass in cls.__mro__:
        found = class_definition(klass)
        if found is None or in_installed_package(found[0]):
            continue
        filename, definition = found
        for statement in ast.walk(definition):
            if isinstance(statement, ast.stmt):
                yield filename, statement


def _float16_cast_in_called_helper(tree: ast.AST, filename: str, frame, modules: list[str]):
    """(helper's file, the cast found there as _float16_cast gives it) when one of `modules` is bound
    by a call of a function of the user's (`model = save_memory(Net())`) that casts its argument to
    float16 (`return model.half()`): the cast is in the helper, which may be in another file."""
    import inspect

    from autograd_doctor.diagnosis.source import function_definition
    from autograd_doctor.recording.frames import in_installed_package

    for statement in ast.walk(tree):
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                and any(segment(filename, t) in modules for t in statement.targets)):
            continue
        function = inspect.unwrap(value_of(frame, statement.value.func)) if isinstance(
            statement.value.func, (ast.Name, ast.Attribute)) else None
        code = getattr(function, "__code__", None)
        if code is None or in_installed_package(code.co_filename):
            continue
        definition = function_definition(code)
        parameters = [argument.arg for argument in definition.args.args] if definition is not None else []
        cast = _float16_cast(definition, code.co_filename, frame, parameters) if definition is not None else None
        if cast is not None:
            if cast[3] is None:  # a default dtype set inside the helper: the model is what it returns
                cast = (*cast[:3], segment(filename, statement.targets[0]))
            return code.co_filename, cast
    return None


def _is_half(frame, node: ast.AST) -> bool:
    """Whether `node` names float16 (`torch.float16`, `torch.half`, or a name bound to it)."""
    return value_of(frame, node) in _HALF or ast.unparse(node).split(".")[-1] in ("float16", "half")


def _float16_cast(tree: ast.AST, filename: str, frame, modules: list[str]):
    """(statement, node, replacement text, module name) of the first cast of one of `modules` to
    float16 in the file: `m.half()`, `m.to(...float16...)`, `m.type(torch.float16)`, also at the
    end of the statement that binds `m` (`m = Net().half()`), or `m.load_state_dict(state,
    assign=True)`, which takes a float16 checkpoint's tensors as the parameters; or
    `torch.set_default_dtype(torch.float16)`, which names no module (the name is then None)."""
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Expr, ast.Assign, ast.Return)):
            continue
        call = statement.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr == "set_default_dtype" and len(call.args) == 1 and _is_half(frame, call.args[0]):
            # torch.set_default_dtype(torch.float16) while the model is built: its layers are made in
            # float16 with no cast to see. float32 is PyTorch's default, the dtype meant for training.
            return statement, call.args[0], "torch.float32", None  # the caller names the model
        receiver = segment(filename, call.func.value)
        bound = [segment(filename, t) for t in statement.targets] if isinstance(statement, ast.Assign) else []
        name = next((m for m in modules if m == receiver or m in bound), None)
        if name is None:
            continue
        if call.func.attr == "half" and not call.args:
            return statement, call, f"{segment(filename, call.func.value)}.float()", name
        if call.func.attr in ("to", "type"):
            for argument in list(call.args) + [k.value for k in call.keywords if k.arg in (None, "dtype")]:
                if value_of(frame, argument) in _HALF:
                    return statement, argument, "torch.float32", name
        if call.func.attr == "load_state_dict":
            # assign=True makes the state dict's (float16) tensors the parameters; without it they
            # are copied into the module's own float32 parameters: the same values, kept in float32.
            for keyword in call.keywords:
                if keyword.arg == "assign" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                    return statement, keyword.value, "False", name
    return None


def step_without_gradients(context: ErrorContext, already):
    """AD167: `scaler.step(optimizer)` on an optimizer whose parameters all have no gradient."""
    found = _grad_scaler_call(context, "step")
    if found is None:
        return None
    frame, filename, statement, location, call, receiver, optimizer_text = found
    optimizer = value_of(frame, call.args[0]) if call.args else None
    parameters = [p for group in getattr(optimizer, "param_groups", None) or [] for p in group.get("params", ())]
    if not parameters or any(getattr(p, "grad", None) is not None for p in parameters):
        return None
    location.role = "step"
    location.note = f"no parameter of {optimizer_text} has a gradient to unscale"
    notes = [f"the backward() since the last {receiver}.update() reached none of the parameters {optimizer_text} "
             "holds, so GradScaler recorded no inf check for it: nothing would train"]
    help_ = Suggestion("compute the loss with torch operations on the model's output, so that backward() "
                       "reaches the parameters: no .numpy(), .item(), .tolist() or float() on the way, and no "
                       "torch.tensor() around the result")
    copied = _optimizer_built_on_a_copy(frame, filename, statement, call.args[0] if call.args else None, parameters)
    if copied is not None:
        built, copy_name, trained_name, change = copied
        notes.append(f"{copy_name} is a deep copy of {trained_name}: the loss reaches {trained_name}'s parameters, "
                     f"which got gradients that no optimizer holds, while {optimizer_text} holds the copy's")
        return diagnosis(codes.STEP_WITHOUT_GRADIENTS, built, related=[location], notes=notes, help=[Suggestion(
            f"build {optimizer_text} from the parameters of {trained_name}, the model the loss is computed with "
            f"({copy_name} stays a copy that follows it)", change, built)])
    rebound = _optimizer_built_before_rebinding(frame, filename, statement, call.args[0] if call.args else None,
                                                parameters)
    if rebound is not None:
        built, model_name, rebinding, change = rebound
        notes.append(f"{model_name} is bound to a new module on line {rebinding.line}, after {optimizer_text} was "
                     f"built on the parameters of the module {model_name} named then: the loss reaches the new "
                     f"module's parameters, which got gradients that no optimizer holds")
        return diagnosis(codes.STEP_WITHOUT_GRADIENTS, built, related=[rebinding, location], notes=notes, help=[
            Suggestion(f"build {optimizer_text} again just after {model_name} is bound to the module that is "
                       f"trained, so that it steps that module's parameters", change, rebinding)])
    frozen = _optimizer_built_on_a_frozen_part(frame, filename, statement, call.args[0] if call.args else None,
                                               parameters)
    if frozen is not None:
        built, part_name, trained_name, change = frozen
        notes.append(f"every parameter of {part_name} is frozen (requires_grad=False), while {trained_name}, "
                     f"beside it in the same model, got gradients that no optimizer holds")
        return diagnosis(codes.STEP_WITHOUT_GRADIENTS, built, related=[location], notes=notes, help=[Suggestion(
            f"build {optimizer_text} from the parameters of {trained_name}, the part of the model that is trained",
            change, built)])
    leaf = _loss_made_as_new_leaf(frame, filename, statement)
    if leaf is None:
        return diagnosis(codes.STEP_WITHOUT_GRADIENTS, location, notes=notes, help=[help_])
    made = location_of(leaf, role="made", note="a new leaf: the loss backpropagated starts here, the model's "
                       "output is not in its graph")
    if made is None:
        return diagnosis(codes.STEP_WITHOUT_GRADIENTS, location, notes=notes, help=[help_])
    notes.append("requires_grad=True on a tensor built from numbers only lets backward() run: its gradient stops at "
                 "that tensor")
    return diagnosis(codes.STEP_WITHOUT_GRADIENTS, made, related=[location], notes=notes, help=[help_])


def _optimizer_built_before_rebinding(frame, filename: str, step: ast.stmt, given: ast.expr | None,
                                      parameters: list):
    """(the construction's location, the module's name, the rebinding's location, the rebinding
    followed by the construction again) when the optimizer stepped was built as
    `Optimizer(model.parameters(), ...)` above the step, `model` was bound again later in the same
    block (`model = build_model()`, before the loop that steps), none of the optimizer's
    parameters belongs to the module `model` names now, and that module has gradients: the
    optimizer holds the parameters of a module no longer used."""
    from autograd_doctor.analysis.errors.context import last_assignment

    found = _built_from_parameters(filename, given, step.lineno)
    if found is None or len(found[0].targets) != 1:
        return None
    built, source = found
    model_name = source.id
    model = value_of(frame, source)
    rebinding = last_assignment(filename, model_name, step.lineno)
    if not isinstance(model, torch.nn.Module) or not isinstance(rebinding, ast.Assign) \
            or rebinding.lineno <= built.end_lineno or rebinding.lineno != rebinding.end_lineno:
        return None
    tree = parse_file(filename)
    block = _body_holding(tree, built) if tree is not None else None
    if block is None or rebinding not in block or any(
            isinstance(node, (ast.For, ast.While)) and node.lineno < rebinding.lineno for node in block
            if block.index(node) > block.index(built)) or step.lineno < rebinding.lineno:
        return None
    held = {id(p) for p in parameters}
    own = list(model.parameters())
    if not own or any(id(p) in held for p in own) or not any(p.grad is not None for p in own):
        return None
    construction, again = text_of(filename, built), text_of(filename, rebinding)
    if construction is None or again is None:
        return None
    return (statement_location(filename, built, role="built", note=f"{given.id} is built on {model_name}'s "
                               f"parameters here, before {model_name} is bound to another module"),
            model_name,
            statement_location(filename, rebinding, role="rebound", note=f"{model_name} is bound to a new module "
                               "here: its parameters are the ones the loss reaches"),
            f"{again}\n{construction}")


def _body_holding(tree: ast.AST, statement: ast.stmt) -> list | None:
    """The statement list (a module's, function's or block's body) that holds `statement`."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and statement in body:
                return body
    return None


def _optimizer_built_on_a_copy(frame, filename: str, step: ast.stmt, given: ast.expr | None, parameters: list):
    """(the construction's location, the copy's name, the original's name, the construction changed)
    when the optimizer stepped was built as `Optimizer(copy.parameters(), ...)` (its assignment
    above the step, in the same file), `copy` was made as `copy.deepcopy(original)`, the optimizer
    holds exactly the copy's parameters, and `original` has parameters with gradients that no live
    optimizer holds: an EMA or teacher copy given to the optimizer instead of the trained model."""
    from autograd_doctor.analysis.errors.context import last_assignment
    from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding

    found = _built_from_parameters(filename, given, step.lineno)
    if found is None:
        return None
    built, source = found
    copy_name = source.id
    held = value_of(frame, source)
    if not isinstance(held, torch.nn.Module) or {id(p) for p in held.parameters()} != {id(p) for p in parameters}:
        return None
    made = last_assignment(filename, copy_name, built.lineno)
    copies = [node for node in ast.walk(made.value) if isinstance(node, ast.Call)
              and (text_of(filename, node.func) or "").split(".")[-1] == "deepcopy"
              and len(node.args) == 1 and isinstance(node.args[0], ast.Name)] \
        if isinstance(made, ast.Assign) and made.value is not None else []
    if len(copies) != 1:
        return None
    trained_name = copies[0].args[0].id
    trained = value_of(frame, copies[0].args[0])
    if not isinstance(trained, torch.nn.Module) or trained is held:
        return None
    with_gradients = [p for p in trained.parameters() if p.grad is not None]
    if not with_gradients or optimizers_holding(with_gradients, Budget(scans=1)) != []:
        return None
    change = replace_node_text(filename, built, source, trained_name)
    if change is None:
        return None
    location = statement_location(filename, built, role="optimizer",
                                  note=f"builds the optimizer from the parameters of {copy_name}, a copy")
    return location, copy_name, trained_name, change


def _optimizer_built_on_a_frozen_part(frame, filename: str, step: ast.stmt, given: ast.expr | None,
                                      parameters: list):
    """(the construction's location, the part's text, the trained part's text, the construction
    changed) when the optimizer stepped was built as `Optimizer(model.part.parameters(), ...)` (its
    assignment above the step, in the same file), it holds exactly that part's parameters, every one
    of them frozen (requires_grad=False), and exactly one other child of `model` has parameters with
    gradients that no live optimizer holds: the frozen part was given to the optimizer instead of
    the trained one (a linear probe's encoder instead of its head)."""
    from autograd_doctor.analysis.errors.context import last_assignment
    from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding

    if not isinstance(given, ast.Name):
        return None
    built = last_assignment(filename, given.id, step.lineno)
    if not isinstance(built, ast.Assign) or not isinstance(built.value, ast.Call):
        return None
    sources = [node.func.value for node in ast.walk(built.value) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters"
               and isinstance(node.func.value, ast.Attribute) and not node.args]
    if len(sources) != 1:
        return None
    part, parent = value_of(frame, sources[0]), value_of(frame, sources[0].value)
    if not isinstance(part, torch.nn.Module) or not isinstance(parent, torch.nn.Module) \
            or {id(p) for p in part.parameters()} != {id(p) for p in parameters} \
            or any(p.requires_grad for p in parameters):
        return None
    trained = [(name, child) for name, child in parent.named_children() if child is not part
               and any(p.grad is not None for p in child.parameters())]
    if len(trained) != 1:
        return None
    trained_name, child = trained[0]
    with_gradients = [p for p in child.parameters() if p.grad is not None]
    if optimizers_holding(with_gradients, Budget(scans=1)) != []:
        return None
    parent_text = text_of(filename, sources[0].value)
    change = replace_node_text(filename, built, sources[0], f"{parent_text}.{trained_name}")
    if change is None or parent_text is None:
        return None
    part_text = text_of(filename, sources[0])
    location = statement_location(filename, built, role="optimizer",
                                  note=f"builds the optimizer from the parameters of {part_text}, all frozen")
    return location, part_text, f"{parent_text}.{trained_name}", change


def _loss_made_as_new_leaf(frame, filename: str, step: ast.stmt):
    """The creation site of the loss the last backward() before `step` started from, when that loss
    (a name bound in the step's frame: `loss.backward()`, `scaler.scale(loss).backward()`) is a leaf
    made with requires_grad=True in the user's code: a value rebuilt from numbers (else None)."""
    tree = parse_file(filename)
    scope = enclosing_function(tree, step.lineno) if tree is not None else None
    scope = scope or tree
    if scope is None:
        return None
    backward_calls = [node for node in ast.walk(scope) if isinstance(node, ast.Call)
                      and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                      and node.lineno < step.lineno]
    if not backward_calls:
        return None
    root = max(backward_calls, key=lambda node: (node.lineno, node.col_offset)).func.value
    if isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr == "scale" and root.args:
        root = root.args[0]
    if not isinstance(root, ast.Name):
        return None
    loss = value_of(frame, root)
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is not None or not loss.requires_grad:
        return None
    return leaf_sites.leaf_creation_site(loss)


def _is_scaler(value) -> bool:
    return any(cls.__name__ == "GradScaler" for cls in type(value).__mro__) \
        and bool(getattr(value, "is_enabled", lambda: False)())


def _held_scalers(context: ErrorContext) -> list:
    """(name, scaler) for the enabled GradScalers the user's frames of the traceback hold (locals,
    then globals), directly or as an attribute of an object they hold (`self.scaler` of a
    Trainer-like class)."""
    found = []
    for frame, _line in context.user_frames():
        for namespace in (frame.f_locals, frame.f_globals):
            for name, value in list(namespace.items()):
                candidates = [(name, value)]
                if not isinstance(value, (type, types.ModuleType)) and not _is_scaler(value):
                    attributes = getattr(value, "__dict__", None)
                    if isinstance(attributes, dict):
                        candidates += [(f"{name}.{attribute}", held) for attribute, held in list(attributes.items())
                                       if isinstance(attribute, str)]
                for candidate_name, candidate in candidates:
                    if _is_scaler(candidate) and not any(candidate is other for _, other in found):
                        found.append((candidate_name, candidate))
    return found


def _enabled_scalers(context: ErrorContext) -> list:
    """The enabled GradScalers the user's frames of the traceback hold (see `_held_scalers`)."""
    return [scaler for _name, scaler in _held_scalers(context)]


def _steps_through(context: ErrorContext, scaler) -> bool:
    """Whether a function of the traceback's user frames (or their module) calls `.step(...)` on
    `scaler`: the loop lets the scaler skip a step whose gradients are not finite."""
    for frame, line in context.user_frames():
        tree = parse_file(frame.f_code.co_filename)
        if tree is None:
            continue
        for scope in (enclosing_function(tree, line), tree):
            for call in find_calls(scope, "step"):
                if isinstance(call.func, ast.Attribute) and value_of(frame, call.func.value) is scaler:
                    return True
    return False


def _partial_refusing_clip(context: ErrorContext, frame, statement: ast.stmt):
    """(file, statement, node of `True`, location) of the `functools.partial(clip_grad_norm_, ...,
    error_if_nonfinite=True)` that made the function the failing statement calls, when that call's
    function is, at run time, such a partial; found among the `partial(...)` calls of the files of
    the traceback's user frames, and only when exactly one binds error_if_nonfinite=True to a
    clip_grad_norm_. None otherwise."""
    import functools

    called = [value_of(frame, call.func) for call in ast.walk(statement) if isinstance(call, ast.Call)]
    # By name: the function the partial holds may be torch's wrapped while the doctor watched.
    if not any(isinstance(value, functools.partial) and getattr(value.func, "__name__", None) == "clip_grad_norm_"
               and value.keywords.get("error_if_nonfinite") is True for value in called):
        return None
    found = []
    files = []
    for user_frame, _line in context.user_frames():
        if user_frame.f_code.co_filename not in files:
            files.append(user_frame.f_code.co_filename)
    for filename in files:
        tree = parse_file(filename)
        if tree is None:
            continue
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and call.args and _called_name(call) == "partial"
                    and _called_name(call.args[0]) == "clip_grad_norm_"):
                continue
            keyword = next((k for k in call.keywords if k.arg == "error_if_nonfinite"), None)
            if keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                found.append((filename, call, keyword.value))
    if len(found) != 1:
        return None
    filename, call, node = found[0]
    from autograd_doctor.diagnosis.source import statement_at

    made = statement_at(filename, call.lineno)
    if made is None:
        return None
    return filename, made, node, statement_location(filename, made)


def _unpacked_refusing_entry(frame, filename: str, statement: ast.stmt):
    """(file, statement, node of `True`) of the `"error_if_nonfinite": True` entry (or
    `dict(error_if_nonfinite=True)` keyword) of the dict that the failing clip_grad_norm_ call
    unpacks with `**name` or `**self.attr`, where that dict is written: the last assignment of the
    name before the statement, or the `self.attr = ...` of the object's class. None when the dict,
    at run time, does not hold error_if_nonfinite=True, or the entry is not found in exactly one place."""
    from autograd_doctor.analysis.errors.context import last_assignment, module_attribute_assignment

    for call in find_calls(statement, "clip_grad_norm_"):
        for keyword in call.keywords:
            if keyword.arg is not None:
                continue
            value = value_of(frame, keyword.value)
            if not (isinstance(value, dict) and value.get("error_if_nonfinite") is True):
                continue
            made_file, made = None, None
            if isinstance(keyword.value, ast.Name):
                made_file, made = filename, last_assignment(filename, keyword.value.id, statement.lineno)
            elif isinstance(keyword.value, ast.Attribute):
                owner = value_of(frame, keyword.value.value)
                if owner is not None:
                    made_file, made = module_attribute_assignment(owner, keyword.value.attr)
            if made is None:
                return None
            entries = [v for node in ast.walk(made) if isinstance(node, ast.Dict)
                       for k, v in zip(node.keys, node.values)
                       if isinstance(k, ast.Constant) and k.value == "error_if_nonfinite"]
            entries += [k.value for node in ast.walk(made) if isinstance(node, ast.Call) and _called_name(node) == "dict"
                        for k in node.keywords if k.arg == "error_if_nonfinite"]
            if len(entries) == 1 and isinstance(entries[0], ast.Constant) and entries[0].value is True:
                return made_file, made, entries[0]
            return None
    return None


def _called_name(node: ast.AST) -> str | None:
    """`partial` for `partial`, `functools.partial` (a name or the last attribute of a call's function)."""
    function = node.func if isinstance(node, ast.Call) else node
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else None


def clipped_non_finite(context: ErrorContext, already):
    """AD183: `clip_grad_norm_(..., error_if_nonfinite=True)` refused the gradients of a step that
    overflowed under a GradScaler, which would have skipped it."""
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    refusing = primary = None
    unpacked = None
    for function_name, position in NONFINITE_REFUSING_CALLS.items():
        for call in find_calls(statement, function_name):
            argument = call_argument(call, position, "error_if_nonfinite")
            if argument is not None and value_of(frame, argument) is True:
                refusing = argument
    if refusing is None:
        # The refusing flag comes in a dict unpacked into the call (`**self.clip_kwargs`): its entry
        # where the dict is written.
        unpacked = _unpacked_refusing_entry(frame, filename, statement)
        if unpacked is not None:
            filename, statement, refusing = unpacked
            location = statement_location(filename, statement)
            primary = Location(file=location.file, line=refusing.lineno, column=refusing.col_offset,
                               end_line=refusing.end_lineno, end_column=refusing.end_col_offset,
                               source=source_line(filename, refusing.lineno).strip())
    if refusing is None:
        # Another spelling of the same call: the clipping function is a functools.partial of
        # clip_grad_norm_ made elsewhere (a config's default), with error_if_nonfinite=True bound.
        bound = _partial_refusing_clip(context, frame, statement)
        if bound is not None:
            filename, statement, refusing, location = bound
            # The primary location is the argument itself: the statement that makes the partial
            # may span lines (a dataclass field's default_factory).
            primary = Location(file=location.file, line=refusing.lineno, column=refusing.col_offset,
                               end_line=refusing.end_lineno, end_column=refusing.end_col_offset,
                               source=source_line(filename, refusing.lineno).strip())
    scalers = [scaler for scaler in _enabled_scalers(context) if _steps_through(context, scaler)]
    if refusing is None or not scalers:
        return None
    scaler = scalers[0]
    scaler_name = next((name for name, value in _held_scalers(context) if value is scaler), "scaler")
    if primary is None:
        primary = location
    primary.role = "clip"
    primary.note = ("error_if_nonfinite=True, written here into the keyword arguments the clipping call unpacks "
                    "(**), refuses the overflow GradScaler expects" if unpacked is not None
                    else "error_if_nonfinite=True, bound here into the clipping function the step calls, refuses the "
                    "overflow GradScaler expects" if primary is not location
                    else "error_if_nonfinite=True refuses the overflow GradScaler expects")
    notes = [f"the loss was scaled by {scaler_name} (scale {scaler.get_scale():g}): at a scale that is too large the "
             "scaled backward overflows to inf or NaN, and GradScaler expects it: "
             f"{scaler_name}.step() skips that step and {scaler_name}.update() lowers the scale",
             "error_if_nonfinite=True raises on that overflow before the step can be skipped"]
    replacement = replace_node_text(filename, statement, refusing, "False")
    help_ = [Suggestion("clip with error_if_nonfinite=False: the step whose gradients overflowed is then skipped by "
                        f"{scaler_name}.step() as it would have been, and the other steps are clipped as before",
                        replacement=replacement, location=location)] if replacement is not None else []
    return diagnosis(codes.CLIPPED_NON_FINITE_UNDER_SCALER, primary, notes=notes, help=help_)


MATCHERS = [
    (r"gradients from `parameters` is non-finite, so it cannot be clipped", clipped_non_finite),
    (r"No inf checks were recorded for this optimizer", step_without_gradients),
    (r"unscale_\(\) has already been called on this optimizer since the last update\(\)", unscaled_twice),
    (r"unscale_\(\) is being called after step\(\)", unscaled_after_step),
    (r"step\(\) has already been called since the last update\(\)", stepped_twice),
    (r"Attempting to unscale FP16 gradients", float16_gradients),
]


def _built_from_parameters(filename: str, given: ast.expr, line: int) -> tuple[ast.Assign, ast.Name] | None:
    """The assignment before `line` that made the optimizer named `given` from one model's
    `<name>.parameters()`, and that name: (`optimizer = SGD(model.parameters())`, `model`)."""
    from autograd_doctor.analysis.errors.context import last_assignment

    if not isinstance(given, ast.Name):
        return None
    built = last_assignment(filename, given.id, line)
    if not isinstance(built, ast.Assign) or not isinstance(built.value, ast.Call):
        return None
    sources = [node.func.value for node in ast.walk(built.value) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters"
               and isinstance(node.func.value, ast.Name) and not node.args]
    return (built, sources[0]) if len(sources) == 1 else None
