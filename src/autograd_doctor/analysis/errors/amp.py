"""Mixed precision's gradient scaler called out of order: `scaler.unscale_(optimizer)` a second
time before `scaler.update()`, most often once per micro-batch in a loop that accumulates
gradients and steps (and updates) only every N micro-batches (AD148); `scaler.step(optimizer)`
a second time before `scaler.update()`, when one optimizer steps on several losses in one
iteration (AD152); `scaler.unscale_(optimizer)` after `scaler.step(optimizer)`, with the
clipping meant for the step written after it (AD151); a GradScaler given an optimizer whose
parameters were made float16 (AD150).

The help moves the `unscale_` statement, with the clipping calls right after it, into the
block that runs `scaler.step(optimizer)`, just before that call: unscale_ then runs once per
step, after the last backward() of the accumulation, and the clipping sees the gradients that
step() applies, unscaled.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import block_holding
from autograd_doctor.analysis.errors.build import diagnosis, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, value_of
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, segment, source_line, statement_location

CLIP_CALLS = ("clip_grad_norm_", "clip_grad_value_")


def _method_call(statement: ast.stmt, method: str) -> ast.Call | None:
    """The call of `statement` when it is `receiver.method(...)` as a statement."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == method:
        return statement.value
    return None


def _calls(node: ast.AST, method: str, receiver: str, filename: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == method and segment(filename, n.func.value) == receiver]


def unscaled_twice(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    call = _method_call(statement, "unscale_")
    scaler = value_of(frame, call.func.value) if call is not None else None
    if call is None or not any(cls.__name__ == "GradScaler" for cls in type(scaler).__mro__):
        return None
    receiver = segment(filename, call.func.value)
    optimizer_text = segment(filename, call.args[0]) if call.args else "optimizer"
    location.role, location.note = "unscale", (f"{receiver}.unscale_({optimizer_text}) runs again before "
                                               f"{receiver}.update()")
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    step = _step_statement(scope, filename, receiver) if scope is not None else None
    related = []
    if step is not None:
        related.append(statement_location(filename, step, role="step", note=f"{receiver}.step() and update() run "
                                          "less often than unscale_(): only when this line runs"))
    notes = [f"unscale_() divides the gradients of {optimizer_text}'s parameters by the loss scale, and may run once "
             f"per step: after one unscale_(), the scaler refuses another until {receiver}.update() (after "
             f"{receiver}.step()) resets it"]
    help_ = _move_into_step_block(filename, scope, statement, step, receiver) if step is not None else None
    if help_ is not None:
        notes.append(f"{receiver}.step() runs inside a condition this line is not under (gradient accumulation: a "
                     "step every N backward() calls), so an unscale_() in every iteration runs twice before the "
                     "first update()")
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {receiver}.unscale_({optimizer_text}) once per step: after the last backward() of the "
        f"accumulation, just before {receiver}.step({optimizer_text}) (clip between the two)")]
    return diagnosis(codes.UNSCALE_BEFORE_UPDATE, location, related=related, notes=notes, help=helps)


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
    moved = [unscale]
    for following in block[start + 1:]:
        if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CLIP_CALLS
                   or isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in CLIP_CALLS
                   for n in ast.walk(following)) or not isinstance(following, ast.Expr):
            break
        moved.append(following)
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


def stepped_twice(context: ErrorContext, already):
    """AD152: `scaler.step(optimizer)` ran again before `scaler.update()`. The help adds
    `scaler.update()` right after the step that ran first: the earlier `step()` statement of the
    same block, or (one step in a loop) the failing statement itself."""
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    call = _method_call(statement, "step")
    scaler = value_of(frame, call.func.value) if call is not None else None
    if call is None or not any(cls.__name__ == "GradScaler" for cls in type(scaler).__mro__):
        return None
    receiver = segment(filename, call.func.value)
    optimizer_text = segment(filename, call.args[0]) if call.args else "optimizer"
    location.role, location.note = "step", f"{receiver}.step({optimizer_text}) runs again before {receiver}.update()"
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    block = block_holding(scope, statement) if scope is not None else None
    earlier = None
    if block is not None:
        for candidate in block[:block.index(statement)]:
            if _method_call(candidate, "step") is not None and segment(filename, candidate.value.func.value) == receiver:
                earlier = candidate
            elif _calls(candidate, "update", receiver, filename):
                earlier = None  # an update() between them: that step is not the one before
    related = []
    if earlier is not None:
        related.append(statement_location(filename, earlier, role="step", note=f"the earlier {receiver}.step(), "
                                          f"with no {receiver}.update() after it"))
    notes = [f"the scaler takes one step() per optimizer between two update() calls: update() reads whether "
             f"that step found inf/NaN gradients and sets the next loss scale; {receiver}.step() refuses a second "
             f"step() until {receiver}.update() has run"]
    after = earlier if earlier is not None else statement
    helps = []
    if block is not None and after.lineno == after.end_lineno:
        indent = source_line(filename, after.lineno)[:after.col_offset]
        text = source_line(filename, after.lineno).rstrip()[len(indent):] + f"\n{receiver}.update()"
        helps.append(Suggestion(f"call {receiver}.update() after each {receiver}.step({optimizer_text}), so that "
                                "every step is followed by its update", text, statement_location(filename, after)))
    helps.append(Suggestion(f"or make one step per iteration: add the losses (one backward()) and call "
                            f"{receiver}.step({optimizer_text}) and {receiver}.update() once"))
    return diagnosis(codes.STEP_BEFORE_UPDATE, location, related=related, notes=notes, help=helps)


def unscaled_after_step(context: ErrorContext, already):
    """AD151: `scaler.unscale_(optimizer)` ran after `scaler.step(optimizer)` (before update()).
    The help moves the unscale_ statement, with the clipping calls right after it, to just
    before the step() statement of the same block."""
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    call = _method_call(statement, "unscale_")
    scaler = value_of(frame, call.func.value) if call is not None else None
    if call is None or not any(cls.__name__ == "GradScaler" for cls in type(scaler).__mro__):
        return None
    receiver = segment(filename, call.func.value)
    optimizer_text = segment(filename, call.args[0]) if call.args else "optimizer"
    location.role, location.note = "unscale", f"{receiver}.unscale_({optimizer_text}) runs after {receiver}.step()"
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    block = block_holding(scope, statement) if scope is not None else None
    step = None
    if block is not None:
        steps = [s for s in block[:block.index(statement)] if _method_call(s, "step") is not None
                 and segment(filename, s.value.func.value) == receiver]
        step = steps[-1] if steps else None
    related = []
    if step is not None:
        related.append(statement_location(filename, step, role="step", note=f"{receiver}.step({optimizer_text}) "
                                          "already ran: it unscaled the gradients itself and applied them"))
    notes = [f"{receiver}.step() unscales the gradients itself when unscale_() was not called before it, then "
             "steps: an unscale_() after it (and the clipping after that) comes too late to change the step, so "
             f"the scaler refuses it until {receiver}.update()"]
    help_ = _move_before_step(filename, block, statement, step, receiver) if step is not None else None
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {receiver}.unscale_({optimizer_text}) (and clip) after backward() and before "
        f"{receiver}.step({optimizer_text})")]
    return diagnosis(codes.UNSCALE_AFTER_STEP, location, related=related, notes=notes, help=helps)


def _move_before_step(filename: str, block: list[ast.stmt], unscale: ast.stmt, step: ast.stmt, receiver: str
                      ) -> Suggestion | None:
    """The step() statement and what follows it up to the unscale_ statement, with the
    unscale_ statement and the clipping statements right after it moved in front of step();
    None when they are not plain one-level statements of one block."""
    start = block.index(unscale)
    moved = [unscale]
    for following in block[start + 1:]:
        if not isinstance(following, ast.Expr) or not any(
                isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in CLIP_CALLS
                                             or isinstance(n.func, ast.Name) and n.func.id in CLIP_CALLS)
                for n in ast.walk(following)):
            break
        moved.append(following)
    indent = source_line(filename, step.lineno)[:step.col_offset]
    moved_lines = [source_line(filename, number).rstrip()
                   for statement in moved for number in range(statement.lineno, statement.end_lineno + 1)]
    between = [source_line(filename, number).rstrip() for number in range(step.lineno, unscale.lineno)]
    if any(line.strip() and not line.startswith(indent) for line in moved_lines + between):
        return None
    lines = moved_lines + between
    location = statement_location(filename, step)
    location.end_line, location.end_column = moved[-1].end_lineno, moved[-1].end_col_offset
    text = "\n".join(line[len(indent):] for line in lines)
    return Suggestion(f"call {receiver}.unscale_() (and the clipping after it) before {receiver}.step(), so that "
                      "the step applies the clipped gradients", text, location)


def _float16_casts(tree: ast.AST) -> list[ast.Call]:
    """Calls `x.half()` and `x.to(torch.float16)` / `x.to(dtype=torch.half)` in the file."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == "half" and not node.args and not node.keywords:
            found.append(node)
        elif node.func.attr == "to" and len(node.args) + len(node.keywords) == 1:
            value = node.args[0] if node.args else node.keywords[0].value
            if isinstance(value, ast.Attribute) and value.attr in ("float16", "half"):
                found.append(node)
    return found


def _casts_of_optimized(tree: ast.AST, frame, optimizer) -> list[ast.Call]:
    """The float16 casts of a module that holds parameters `optimizer` steps: the cast's receiver,
    or the name it is assigned to, is (in the failing frame) such a module."""
    optimized = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group["params"]}
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            for inner in ast.walk(node.value):
                assigned[id(inner)] = node.targets[0]
    found = []
    for cast in _float16_casts(tree):
        for holder in (cast.func.value, assigned.get(id(cast))):
            module = value_of(frame, holder) if holder is not None else None
            if callable(getattr(module, "parameters", None)) and any(id(p) in optimized for p in module.parameters()):
                found.append(cast)
                break
    return found


def float16_parameters(context: ErrorContext, already):
    """AD150: the scaler was asked to unscale gradients of float16 parameters. When the file
    makes float16 values in exactly one place (`.half()` / `.to(torch.float16)`), that call is
    the line to change: the parameters stay float32 and autocast computes in float16."""
    found = user_statement(context)
    if found is None:
        return None
    frame, _line, filename, statement, location = found
    calls = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("step", "unscale_")]
    scaler = value_of(frame, calls[0].func.value) if calls else None
    if not calls or not any(cls.__name__ == "GradScaler" for cls in type(scaler).__mro__):
        return None
    receiver = segment(filename, calls[0].func.value)
    optimizer_text = segment(filename, calls[0].args[0]) if calls[0].args else "optimizer"
    location.role, location.note = "unscale", (f"{receiver}.{calls[0].func.attr}({optimizer_text}) unscales "
                                               "float16 gradients")
    tree = parse_file(filename)
    optimizer = value_of(frame, calls[0].args[0]) if calls[0].args else None
    casts = _casts_of_optimized(tree, frame, optimizer) if tree is not None else []
    notes = ["the loss scale exists because float16 gradients underflow; unscaling them in float16 would lose what "
             "the scale kept, so the scaler wants float32 parameters (and gradients) and refuses float16 ones. "
             "Mixed precision keeps the parameters float32 and lets torch.autocast run the operations in float16"]
    if len(casts) != 1:
        return diagnosis(codes.FLOAT16_PARAMETERS_SCALED, location, notes=notes, help=[Suggestion(
            f"keep the parameters of {optimizer_text} float32 (no .half() / .to(torch.float16) on the model) and "
            "run the forward pass under torch.autocast(..., dtype=torch.float16)")])
    cast = casts[0]
    cast_location = statement_location(filename, cast, role="cast", note="the parameters are made float16 here")
    holder = next((node for node in ast.walk(tree) if isinstance(node, ast.stmt) and not hasattr(node, "body")
                   and node.lineno <= cast.lineno and cast.end_lineno <= node.end_lineno), None)
    if holder is None or holder.lineno != holder.end_lineno:
        return diagnosis(codes.FLOAT16_PARAMETERS_SCALED, cast_location, related=[location], notes=notes, help=[
            Suggestion("keep the parameters float32: remove this float16 cast and run the forward pass under "
                       "torch.autocast(..., dtype=torch.float16)")])
    line = source_line(filename, holder.lineno)
    text = (line[holder.col_offset:cast.col_offset] + segment(filename, cast.func.value)
            + line[cast.end_col_offset:holder.end_col_offset])
    change = statement_location(filename, holder)
    help_ = Suggestion("keep the parameters float32: remove the float16 cast (torch.autocast runs the operations in "
                       "float16, and the scaler unscales float32 gradients)", text, change)
    return diagnosis(codes.FLOAT16_PARAMETERS_SCALED, cast_location, related=[location], notes=notes, help=[help_])


MATCHERS = [
    (r"unscale_\(\) has already been called on this optimizer since the last update\(\)", unscaled_twice),
    (r"Attempting to unscale FP16 gradients", float16_parameters),
    (r"unscale_\(\) is being called after step\(\)", unscaled_after_step),
    (r"step\(\) has already been called since the last update\(\)", stepped_twice),
]
