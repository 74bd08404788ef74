"""The order of backward(), gradient clipping, zero_grad() and step() in a training loop, read
from what ran (recording/gradient_clips.py, recording/gradient_states.py) just before a step():

- AD208: the gradients this step() applies changed (a backward() filled them) after the last
  clipping call on the optimizer's parameters since its previous step: the clipping ran before
  backward() (on gradients zero_grad() had cleared) or after the previous step(), and this step
  applies gradients nobody clipped.
- AD209: the gradients the previous step() applied were still there, never cleared, when the
  next backward() added to them, and are still there now: this step applies the sum.
- AD210: the last clipping call ran after the backward() and before the GradScaler unscaled the
  gradients (recording/grad_scalers.py): it clipped gradients multiplied by the loss scale.
- AD212: a clipping call on the optimizer's parameters since its previous step was followed by
  a backward() that added to the very gradients it clipped (judged when that backward() started,
  recording/gradient_clips.py): inside a gradient accumulation, the step applies clipped partial
  sums instead of the clipped total.

Each help moves or adds one statement in the user's loop, where the statements involved are
siblings of one block; otherwise the help is advice only.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    call_name, display_path, location_of, segment, source_line, statement_location,
)

# The clipping functions recording/gradient_clips.py watches (a clip between two others is not moved).
NAMES_OF_CLIPS = ("clip_grad_norm_", "clip_grad_value_")


def _optimizer_parameter_ids(optimizer) -> set[int]:
    return {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())}


def _changed_since(clip, parameter_ids: set[int]) -> bool | None:
    """Whether every sampled parameter of the clip that the optimizer steps and that has a
    gradient now holds another gradient than the clip left (another tensor, or written since);
    None when no sampled parameter is the optimizer's."""
    seen = False
    for parameter_ref, gradient_ref, version in clip.samples:
        parameter = parameter_ref()
        if parameter is None or id(parameter) not in parameter_ids:
            continue
        gradient = parameter.grad
        if gradient is None:
            continue
        seen = True
        if gradient_ref is not None and gradient is gradient_ref() and gradient._version == version:
            return False
    return True if seen else None


def misplaced_clip_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD208 before `optimizer.step()` (called from `stack`), or None."""
    clips = recorder.gradient_clips
    since = clips.last_step.get(optimizer, 0)
    recent = [clip for clip in clips.clips if clip.seq > since]
    if not recent:  # the usual step: no clipping since the last one, nothing to gather
        return None
    ids = _optimizer_parameter_ids(optimizer)
    exhausted = [clip for clip in recent if clip.exhausted]
    recent = [clip for clip in recent if any(p() is not None and id(p()) in ids for p, _g, _v in clip.samples)]
    if not recent and exhausted and stack and _has_gradients(optimizer):
        return _exhausted_clip_diagnosis(exhausted[-1], stack[0], type(optimizer).__name__)
    if not recent or not stack:
        return None
    clip = recent[-1]
    backwards = [call for call in recorder.backward_calls if call.seq > clip.seq and call.site is not None]
    if not backwards or not _changed_since(clip, ids):
        return None
    return _clip_diagnosis(clip, backwards[-1].site, stack[0], type(optimizer).__name__)


def clip_before_unscale_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD210 before `optimizer.step()` (called from `stack`), or None: the last clipping call on
    its parameters since its previous step ran after the backward() that filled them and before
    the GradScaler unscaled them (the unscale_() came after it, in `scaler.step()` or later)."""
    clips = recorder.gradient_clips
    since = clips.last_step.get(optimizer, 0)
    recent = [clip for clip in clips.clips if clip.seq > since]
    if not recent:  # the usual step: no clipping since the last one
        return None
    unscaled = recorder.grad_scalers.unscaled_at(optimizer)
    if unscaled is None or unscaled[0] <= recent[-1].seq:
        return None  # no unscale_() after the clipping: not this problem (or unscaled first, as it should be)
    ids = _optimizer_parameter_ids(optimizer)
    exhausted = [clip for clip in recent if clip.exhausted]
    recent = [clip for clip in recent if any(p() is not None and id(p()) in ids for p, _g, _v in clip.samples)]
    if not recent and exhausted and stack and _has_gradients(optimizer):
        return _exhausted_clip_diagnosis(exhausted[-1], stack[0], type(optimizer).__name__)
    if not recent or not stack:
        return None
    clip, (unscale_seq, scaler) = recent[-1], unscaled
    backwards = [call for call in recorder.backward_calls if since < call.seq < clip.seq and call.site is not None]
    if not backwards or unscale_seq <= clip.seq or not clip.had_gradients:
        return None
    earlier = _unscaled_through_another(optimizer, recorder)
    if earlier is not None and earlier.seq < clip.seq:
        return None  # the clipping saw unscaled gradients; the step unscales them again (AD248's business)
    if any(clip.seq < call.seq for call in recorder.backward_calls):
        return None  # a backward() after the clipping: AD208's case
    try:
        scale = float(scaler.get_scale())
    except Exception:
        return None
    if scale == 1.0:
        return None  # nothing was multiplied: the clipping saw the real gradients
    return _unscale_diagnosis(clip, backwards[-1].site, stack[0], type(optimizer).__name__, scale)


def _unscaled_through_another(optimizer, recorder):
    """The UnscaleCall (recording/grad_scalers.py) that divided this optimizer's gradients through
    another object (a wrapper with its param_groups) after the last backward(), before the
    optimizer's own latest unscale_() by the same scaler divided them again; None otherwise."""
    calls = list(recorder.grad_scalers.calls)
    own = [call for call in calls if call.target_id == id(optimizer)
           and (call.target is None or call.target() is optimizer)]
    if not own:
        return None
    last = own[-1]
    ids = _optimizer_parameter_ids(optimizer)
    backwards = [call.seq for call in recorder.backward_calls if call.seq < last.seq]
    if not backwards or not ids:
        return None
    for call in reversed(calls):
        if call.seq >= last.seq or call.seq < backwards[-1]:
            continue
        if call.target_id == id(optimizer) or call.scaler() is None or call.scaler() is not last.scaler():
            continue
        if call.parameter_ids & ids:
            return call
    return None


def double_unscale_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD248 before `optimizer.step()` (called from `stack`), or None: an enabled GradScaler
    divided the optimizer's gradients by the loss scale twice since the last backward(): once
    through another object holding its parameters (a wrapper), then as the optimizer's own
    unscale_() (in `scaler.step(optimizer)`), because the scaler keeps its "unscaled" mark per object."""
    earlier = _unscaled_through_another(optimizer, recorder)
    if earlier is None or earlier.site is None or not stack:
        return None
    scaler = earlier.scaler()
    try:
        scale = float(scaler.get_scale())
    except Exception:
        return None
    if scale == 1.0:
        return None  # dividing by 1 twice changes nothing
    filename = earlier.site.filename
    scope = Scope(filename, earlier.site.lineno)
    statement = scope.statement_at(earlier.site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    optimizer_class = type(optimizer).__name__
    primary = statement_location(filename, statement, role="unscale",
                                 note=f"unscale_() is given the {earlier.target_class}, not the {optimizer_class} "
                                      f"that steps: it divides the gradients by the loss scale ({scale:g}) but "
                                      f"marks only the {earlier.target_class} as unscaled")
    own = [call for call in recorder.grad_scalers.calls if call.target_id == id(optimizer)]
    second_site = own[-1].site if own else None
    related = [location_of(second_site or stack[0], role="unscale",
                           note=f"the scaler finds the {optimizer_class} not unscaled and divides the same "
                                "gradients again before its step()")]
    notes = [f"GradScaler remembers which optimizer it unscaled by the object passed to unscale_(). The "
             f"{earlier.target_class} holds the {optimizer_class}'s param_groups, so unscale_() divided those "
             f"gradients, but scaler.step() of the {optimizer_class} itself unscaled them once more: every "
             f"step applies gradients {scale:g} times too small (and any clipping in between saw the right "
             "values), with no error"]
    helps = []
    attribute = _attribute_holding(earlier.target() if earlier.target is not None else None, optimizer)
    help_ = _unscale_inner_help(filename, statement, attribute) if attribute is not None else None
    if help_ is not None:
        helps.append(help_)
    else:
        helps.append(Suggestion(f"pass unscale_() the {optimizer_class} that scaler.step() receives, not the "
                                f"{earlier.target_class} around it"))
    return Diagnosis(code=codes.DOUBLE_UNSCALE, title=codes.title(codes.DOUBLE_UNSCALE), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def _attribute_holding(wrapper, optimizer) -> str | None:
    """The name of the wrapper's attribute that is the optimizer itself, or None."""
    if wrapper is None:
        return None
    names = []
    for name, value in list(getattr(wrapper, "__dict__", {}).items()):
        if value is optimizer and name.isidentifier():
            names.append(name)
    public = [name for name in names if not name.startswith("_")]
    chosen = (public or names)
    return chosen[0] if chosen else None


def _unscale_inner_help(filename: str, statement, attribute: str) -> Suggestion | None:
    """`scaler.unscale_(wrapper)` rewritten as `scaler.unscale_(wrapper.<attribute>)`."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "unscale_"
            and len(statement.value.args) == 1 and not statement.value.keywords):
        return None
    func = segment(filename, statement.value.func)
    argument = segment(filename, statement.value.args[0])
    if func is None or argument is None or "\n" in func or "\n" in argument:
        return None
    if not isinstance(statement.value.args[0], (ast.Name, ast.Attribute)):
        argument = f"({argument})"
    return Suggestion(f"unscale the optimizer that steps: pass {argument}.{attribute} to unscale_() (scaler.step() "
                      "then sees it unscaled and does not divide again)", f"{func}({argument}.{attribute})",
                      statement_location(filename, statement))


def _unscale_diagnosis(clip, backward_site, step_site, optimizer_class: str, scale: float) -> Diagnosis | None:
    found = _clip_statement(clip)
    if found is None:
        return None
    filename, scope, clip_statement = found
    primary = statement_location(filename, clip_statement, role="clip", note=f"{clip.function} sees the gradients "
                                 f"still multiplied by the loss scale ({scale:g})")
    related = [location_of(backward_site, role="backward", note="backward() of the scaled loss filled the gradients"),
               location_of(step_site, role="step", note="the scaler unscales the clipped gradients only here, then "
                                                        f"{optimizer_class}.step() applies them")]
    notes = [f"GradScaler.scale(loss).backward() leaves every gradient multiplied by the loss scale ({scale:g}) until "
             f"unscale_() divides it back. {clip.function} ran in between, so its limit applied to the scaled "
             f"gradients: once unscaled, the step applies gradients clipped to a limit {scale:g} times smaller than "
             "the one written (no error)"]
    help_ = _unscale_help(filename, scope, clip_statement, step_site)
    helps = [help_] if help_ is not None else [Suggestion(
        "call scaler.unscale_(optimizer) between the backward() and the clipping, as in PyTorch's AMP guide")]
    return Diagnosis(code=codes.CLIP_BEFORE_UNSCALE, title=codes.title(codes.CLIP_BEFORE_UNSCALE),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _unscale_help(filename: str, scope: Scope, clip_statement, step_site) -> Suggestion | None:
    """`scaler.unscale_(optimizer)` inserted before the clipping statement, the names read from
    the `scaler.step(optimizer)` statement in the same function."""
    if step_site.filename != filename:
        return None
    step_statement = scope.statement_at(step_site.lineno)
    if not (isinstance(step_statement, ast.Expr) and isinstance(step_statement.value, ast.Call)
            and isinstance(step_statement.value.func, ast.Attribute) and step_statement.value.func.attr == "step"
            and len(step_statement.value.args) == 1 and not step_statement.value.keywords):
        return None
    if Scope(filename, step_site.lineno).node is not scope.node:
        return None  # the scaler's and the optimizer's names may mean other things at the clipping
    call = step_statement.value
    unscale = f"{segment(filename, call.func.value)}.unscale_({segment(filename, call.args[0])})"
    clip_text = segment(filename, clip_statement)
    if clip_text is None or "\n" in clip_text:
        return None
    return Suggestion(f"unscale the gradients before clipping them: call {unscale} after backward() (step() then "
                      "does not unscale again)", f"{unscale}\n{clip_text}",
                      statement_location(filename, clip_statement))


def _block_of(scope: Scope, statement: ast.stmt) -> list | None:
    parent = scope.parents.get(statement)
    for name in ("body", "orelse", "finalbody"):
        statements = getattr(parent, name, None)
        if isinstance(statements, list) and statement in statements:
            return statements
    return None


def _calls_named(statements: list, names: set[str]) -> bool:
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
               for statement in statements for node in ast.walk(statement))


def _moved(filename: str, statements: list, indent: str) -> list[str] | None:
    lines = []
    for statement in statements:
        for number in range(statement.lineno, statement.end_lineno + 1):
            line = source_line(filename, number).rstrip()
            if not line.startswith(indent):
                return None
            lines.append(line[len(indent):])
    return lines


def _move_help(filename: str, clip_statement, backward_statement, step_statement, clip_text: str):
    """(help, case): the clip moved to just after the backward() statement ("before_backward") or
    to just before the step() statement ("after_step"), all three siblings in one block and
    nothing between that steps, clears or calls backward() again; (None, case) otherwise."""
    scope = Scope(filename, clip_statement.lineno)
    block = _block_of(scope, clip_statement) if scope.tree is not None else None
    indent = source_line(filename, clip_statement.lineno)[: clip_statement.col_offset]
    if block is not None and backward_statement in block and block.index(clip_statement) < block.index(
            backward_statement):
        between = block[block.index(clip_statement) + 1: block.index(backward_statement) + 1]
        if _calls_named(between[:-1], {"step", "backward"}):
            return None, "before_backward"
        lines = _moved(filename, between, indent)
        clip_lines = _moved(filename, [clip_statement], indent)
        if lines is None or clip_lines is None:
            return None, "before_backward"
        location = statement_location(filename, clip_statement)
        location.end_line, location.end_column = backward_statement.end_lineno, backward_statement.end_col_offset
        return Suggestion(f"call {clip_text} after backward(), just before step(), so that it clips the "
                          "gradients that step() applies", "\n".join([*lines, *clip_lines]), location), \
            "before_backward"
    if block is not None and step_statement in block and block.index(step_statement) < block.index(clip_statement):
        between = block[block.index(step_statement): block.index(clip_statement)]
        if _calls_named(between[1:], {"step", "backward", "zero_grad"}):
            return None, "after_step"
        lines = _moved(filename, between, indent)
        clip_lines = _moved(filename, [clip_statement], indent)
        if lines is None or clip_lines is None:
            return None, "after_step"
        location = statement_location(filename, step_statement)
        location.end_line, location.end_column = clip_statement.end_lineno, clip_statement.end_col_offset
        return Suggestion(f"call {clip_text} before step(), so that the step applies the clipped gradients",
                          "\n".join([*clip_lines, *lines]), location), "after_step"
    return None, ""


def _clip_statement(clip) -> tuple[str, Scope, ast.stmt] | None:
    """(file, scope, statement) of a remembered clipping call, or None when its source is unknown."""
    clip_site = clip.site
    if clip_site is None:
        return None
    scope = Scope(clip_site.filename, clip_site.lineno)
    clip_statement = scope.statement_at(clip_site.lineno) if scope.tree is not None else None
    return (clip_site.filename, scope, clip_statement) if clip_statement is not None else None


def _clip_diagnosis(clip, backward_site, step_site, optimizer_class: str) -> Diagnosis | None:
    found = _clip_statement(clip)
    if found is None:
        return None
    filename, scope, clip_statement = found
    same_file = backward_site.filename == filename and step_site.filename == filename
    backward_statement = scope.statement_at(backward_site.lineno) if same_file else None
    step_statement = scope.statement_at(step_site.lineno) if same_file else None
    help_, case = None, ""
    if backward_statement is not None and step_statement is not None:
        help_, case = _move_help(filename, clip_statement, backward_statement, step_statement, clip.function)
    if not case:
        case = "after_step" if clip.had_gradients else "before_backward"
    if case == "before_backward":
        note = (f"{clip.function} runs here, before backward() fills the gradients that step() applies"
                + ("" if clip.had_gradients else ": they were None (cleared, or not computed yet), so it clipped nothing"))
    else:
        note = (f"{clip.function} runs here, after step() already applied the gradients it clips; backward() "
                "then replaces or adds to them before the next step()")
    primary = statement_location(filename, clip_statement, role="clip", note=note)
    related = [location_of(backward_site, role="backward", note="backward() filled the gradients after the clipping"),
               location_of(step_site, role="step", note=f"{optimizer_class}.step() applies gradients that were "
                                                         "not clipped")]
    if case == "before_backward" and help_ is not None:
        # The two statements are in the wrong order: the location is both, up to the backward().
        primary.end_line, primary.end_column = backward_statement.end_lineno, backward_statement.end_col_offset
    notes = [f"the gradients {optimizer_class}.step() applied here were computed by a backward() that ran after the "
             f"last {clip.function} call on these parameters, so the clipping did not limit this update (no error: "
             "clipping at the wrong point in the loop changes nothing)"]
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {clip.function} between the backward() that computes the gradients and step(): "
        "loss.backward(); clip; optimizer.step()")]
    return Diagnosis(code=codes.CLIP_OUTSIDE_UPDATE, title=codes.title(codes.CLIP_OUTSIDE_UPDATE), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def clip_inside_accumulation_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD212 before `optimizer.step()` (called from `stack`), or None."""
    if not stack:
        return None
    clips = recorder.gradient_clips
    since = clips.last_step.get(optimizer, 0)
    # A partial sum: the clipping saw non-zero gradients that a backward() since the last step
    # computed (not zeros left by zero_grad(set_to_none=False)), and the next backward() added to them.
    # The clip log is read first: with no such clip since the step (every step of a loop that
    # clips once, after its last backward(), or not at all), the optimizer's parameters are not walked.
    candidates = [clip for clip in clips.clips if clip.seq > since and clip.accumulated_onto and clip.clipped_nonzero]
    if not candidates:
        return None
    ids = _optimizer_parameter_ids(optimizer)
    filled = {call.seq for call in recorder.backward_calls if call.seq > since}
    accumulated = [clip for clip in candidates if any(seq < clip.seq for seq in filled)
                   and any(p() is not None and id(p()) in ids for p, _g, _v in clip.samples)]
    if not accumulated:
        return None
    clip = accumulated[0]
    backwards = [call for call in recorder.backward_calls if call.seq > clip.seq and call.site is not None]
    if not backwards:
        return None
    return _accumulation_diagnosis(clip, backwards[0].site, stack[0], type(optimizer).__name__)


def _accumulation_diagnosis(clip, backward_site, step_site, optimizer_class: str) -> Diagnosis | None:
    found = _clip_statement(clip)
    if found is None:
        return None
    filename, scope, clip_statement = found
    primary = statement_location(filename, clip_statement, role="clip",
                                 note=f"{clip.function} clips the gradients accumulated so far, and the next "
                                      "backward() adds to the clipped values")
    related = [location_of(backward_site, role="backward", note="this backward() adds to the clipped gradients, "
                                                                "before any step()"),
               location_of(step_site, role="step", note=f"{optimizer_class}.step() applies clipped partial sums, "
                                                        "not the clipped sum of the accumulated gradients")]
    notes = [f"{clip.function} ran between two backward() calls whose gradients one {optimizer_class}.step() "
             "applies (gradient accumulation): each call clipped a partial sum, and the step applies "
             "clip(clip(g1) + g2) + ... instead of clip(g1 + g2 + ...), an update that depends on how the batch was "
             "split (no error)"]
    help_ = None
    if step_site.filename == filename:
        step_statement = scope.statement_at(step_site.lineno)
        if step_statement is not None and Scope(filename, step_site.lineno).node is scope.node:
            help_ = _clip_before_step_help(filename, scope, clip_statement, step_statement, clip.function)
    helps = [help_] if help_ is not None else [Suggestion(
        f"call {clip.function} once per step(), after the last backward() of the accumulation and just before "
        "step() (in the block that steps)")]
    return Diagnosis(code=codes.CLIP_INSIDE_ACCUMULATION, title=codes.title(codes.CLIP_INSIDE_ACCUMULATION),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _clip_before_step_help(filename: str, scope: Scope, clip_statement, step_statement, function: str):
    """The clipping statement moved to just before `opt.step()`, which comes after it in the same
    block or in a compound statement of that block (`if (i + 1) % n == 0:`), with nothing in
    between that calls backward(), step(), zero_grad() or clips; None otherwise."""
    if _step_receiver(filename, step_statement) is None:
        return None  # scaler.step(optimizer): the unscale_() must come first (AD210's business)
    block = _block_of(scope, clip_statement)
    if block is None:
        return None
    holder = step_statement
    while holder is not None and holder not in block:
        holder = scope.parents.get(holder)
    if holder is None or block.index(holder) <= block.index(clip_statement):
        return None
    names = {"backward", "step", "zero_grad", *NAMES_OF_CLIPS}
    between = block[block.index(clip_statement) + 1: block.index(holder)]
    if _calls_named(between, names):
        return None
    if holder is not step_statement:
        # Inside the compound statement, only what runs before the step() in its own block.
        step_block = _block_of(scope, step_statement)
        if step_block is None or _calls_named(step_block[:step_block.index(step_statement)], names):
            return None
        if isinstance(holder, ast.If) and _calls_named([holder.test], names):
            return None
    indent = source_line(filename, clip_statement.lineno)[: clip_statement.col_offset]
    clip_lines = _moved(filename, [clip_statement], indent)
    if clip_lines is None:
        return None
    step_indent = source_line(filename, step_statement.lineno)[: step_statement.col_offset]
    if not step_indent.startswith(indent):
        return None
    extra = step_indent[len(indent):]
    lines = []
    for number in range(clip_statement.end_lineno + 1, step_statement.end_lineno + 1):
        if number == step_statement.lineno:
            lines.extend(extra + line for line in clip_lines)
        line = source_line(filename, number).rstrip()
        if line and not line.startswith(indent):
            return None
        lines.append(line[len(indent):])
    location = statement_location(filename, clip_statement)
    location.end_line, location.end_column = step_statement.end_lineno, step_statement.end_col_offset
    return Suggestion(f"call {function} once per step(), just before step(), so that it clips the sum of the "
                      "accumulated gradients", "\n".join(lines), location)


def _has_gradients(optimizer) -> bool:
    return any(getattr(p, "grad", None) is not None for group in getattr(optimizer, "param_groups", ())
               for p in group.get("params", ()))


def _exhausted_clip_diagnosis(clip, step_site, optimizer_class: str) -> Diagnosis | None:
    """AD208 for a clipping call that was given an iterator with nothing left in it (a
    `model.parameters()` generator that an earlier loop read to the end): it clipped nothing, and
    the step applies the gradients as backward() left them. The help makes the iterator a list
    where it is made, when the clipping call's argument is a name assigned from a one-line call."""
    clip_site = clip.site
    if clip_site is None:
        return None
    filename = clip_site.filename
    scope = Scope(filename, clip_site.lineno)
    clip_statement = scope.statement_at(clip_site.lineno) if scope.tree is not None else None
    if clip_statement is None:
        return None
    call = next((node for node in ast.walk(clip_statement) if isinstance(node, ast.Call)
                 and call_name(node) == clip.function and node.args), None)
    argument = call.args[0] if call is not None else None
    made = scope.latest_assignment(argument.id, clip_statement.lineno) if isinstance(argument, ast.Name) else None
    given = segment(filename, argument) if argument is not None else "the parameters"
    primary = statement_location(filename, clip_statement, role="clip",
                                 note=f"{clip.function} gets {given}, an iterator with nothing left in it: it clips "
                                      "nothing")
    related = [location_of(step_site, role="step", note=f"{optimizer_class}.step() applies gradients that were not "
                                                        "clipped")]
    notes = [f"{given} was read to the end before this call (a generator such as model.parameters() can be read "
             "once), so the clipping saw no tensor and the step applies the gradients unclipped (no error)"]
    helps = []
    if made is not None:
        statement, value = made
        made_location = statement_location(filename, statement, role="made",
                                           note=f"{given} is made here, as an iterator that can be read once")
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.lineno == statement.end_lineno \
                and isinstance(value, ast.Call):
            # The line to change is where the iterator is made; the clipping call is where it shows.
            primary.role = "clip"
            related.insert(0, primary)
            primary = made_location
            helps.append(Suggestion(
                f"make {given} a list where it is made, so that every loop over it, and the clipping, sees all "
                "the tensors", f"{given} = list({segment(filename, value)})", statement_location(filename, statement)))
        else:
            related.insert(0, made_location)
    if not helps:
        helps.append(Suggestion(f"give {clip.function} a list of the parameters (list(model.parameters())), not an "
                                "iterator that an earlier loop may have used up"))
    return Diagnosis(code=codes.CLIP_OUTSIDE_UPDATE, title=codes.title(codes.CLIP_OUTSIDE_UPDATE), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def _step_receiver(filename: str, statement) -> str | None:
    """`opt` for the statement `opt.step()`."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "step":
        return segment(filename, statement.value.func.value)
    return None


def _first_backward_before(scope: Scope, step_statement) -> ast.stmt | None:
    """The first statement calling backward() in the step's own block, after the block's
    previous step() (the backward() calls whose gradients this step is meant to apply):
    `zero_grad()` goes before it.  None when no backward() is a statement of that block
    (an inner accumulation loop: where to clear is the user's choice)."""
    block = _block_of(scope, step_statement) if step_statement is not None else None
    if block is None:
        return None
    earlier = block[:block.index(step_statement)]
    steps = [i for i, statement in enumerate(earlier) if _calls_named([statement], {"step"})]
    earlier = earlier[steps[-1] + 1:] if steps else earlier
    for statement in earlier:
        if _calls_named([statement], {"backward"}):
            is_call = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            return statement if is_call else None
    return None


def _step_at(site) -> tuple[Scope, ast.stmt | None, str | None]:
    """The scope and statement of a step() call site, and `opt` when it is written `opt.step()`."""
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    return scope, statement, _step_receiver(site.filename, statement) if statement is not None else None


def _receiver_and_first_backward(step_site, filename: str) -> tuple[str | None, ast.stmt | None]:
    """`opt` for a step() written `opt.step()`, and the first backward() statement of its block in
    `filename` (where `opt.zero_grad()` belongs; None when there is no such statement)."""
    scope, statement, receiver = _step_at(step_site)
    if receiver is None or step_site.filename != filename:
        return receiver, None
    return receiver, _first_backward_before(scope, statement)


def _zero_grad_of(statements: list, receiver: str) -> bool:
    """Whether the statements (at any depth) call `<receiver>.zero_grad()`."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "zero_grad"
               and ast.unparse(node.func.value) == receiver for statement in statements for node in ast.walk(statement))


def _branch_without_clear(scope: Scope, step_statement, receiver: str) -> tuple[ast.If, list, int] | None:
    """(the `if`, the arm that holds the step, the line of that arm's `if`/`elif`/`else`) when the
    step is in one arm of an if/elif/else chain whose other arm clears `receiver`'s gradients and
    this one does not: the arm taken is the path that forgot `zero_grad()` (a bfloat16 path beside
    a float32 one). None when a loop lies between the step and the `if` (once per arm would not be
    once per step), or when no other arm clears."""
    node = step_statement
    while True:
        parent = scope.parents.get(node)
        if parent is None or isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef,
                                                 ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            return None
        if isinstance(parent, ast.If):
            break
        node = parent
    arm = parent.body if node in parent.body else parent.orelse
    if node not in arm or _zero_grad_of(arm, receiver):
        return None
    top = parent
    while isinstance(scope.parents.get(top), ast.If) and scope.parents[top].orelse == [top]:
        top = scope.parents[top]  # the chain's first `if`, above its `elif`s
    arms, chain = [], top
    while isinstance(chain, ast.If):
        arms.append(chain.body)
        if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) and \
                source_line(scope.filename, chain.orelse[0].lineno).lstrip().startswith("elif"):
            chain = chain.orelse[0]
        else:
            if chain.orelse:
                arms.append(chain.orelse)
            break
    if not any(_zero_grad_of(other, receiver) for other in arms if other is not arm):
        return None
    if arm is parent.body:
        header = parent.lineno
    else:
        header = next((n for n in range(parent.body[-1].end_lineno + 1, arm[0].lineno)
                       if source_line(scope.filename, n).strip().startswith("else")), None)
        if header is None:
            return None
    return parent, arm, header


def _cleared_in_branch_help(scope: Scope, step_statement, receiver: str) -> tuple[Suggestion, Location] | None:
    """The help that clears the gradients at the start of the arm that holds the step, as the
    other arm does, and the arm's header as the primary location."""
    found = _branch_without_clear(scope, step_statement, receiver)
    if found is None:
        return None
    _if, arm, header = found
    filename, first = scope.filename, arm[0]
    indent = source_line(filename, first.lineno)[:first.col_offset]
    lines = [source_line(filename, n).rstrip() for n in range(first.lineno, first.end_lineno + 1)]
    lines = [line[len(indent):] if line.startswith(indent) else line.strip() for line in lines]
    location = Location(file=display_path(filename), line=first.lineno, column=first.col_offset,
                        end_line=first.end_lineno, end_column=first.end_col_offset,
                        source=source_line(filename, first.lineno).strip())
    help = Suggestion(f"clear the gradients on this path too: call {receiver}.zero_grad() at its start, as the "
                      "other path does (once per step(), so that each step applies only its own gradients)",
                      "\n".join([f"{receiver}.zero_grad()", *lines]), location)
    text = source_line(filename, header)
    primary = Location(file=display_path(filename), line=header, column=len(text) - len(text.lstrip()),
                       end_line=header, end_column=len(text.rstrip()), source=text.strip(), role="path",
                       note=f"the path taken here runs backward() and {receiver}.step() without "
                            f"{receiver}.zero_grad(); the other path clears them")
    return help, primary


def gradients_never_cleared_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD209 before `optimizer.step()` (called from `stack`), or None."""
    carried = recorder.gradient_states.carried_into_step(optimizer)
    if carried is None or not stack or carried.backward_call.site is None:
        return None
    backward_call = carried.backward_call
    backward_site, step_site = backward_call.site, stack[0]
    optimizer_class = type(optimizer).__name__
    filename = backward_site.filename
    backward_statement = Scope(filename, backward_site.lineno).statement_at(backward_site.lineno)
    if backward_statement is None:
        return None
    primary = statement_location(filename, backward_statement, role="backward",
                                 note="this backward() adds to the gradients the previous step() already applied: "
                                      "nothing cleared them in between")
    related = [location_of(step_site, role="step", note=f"{optimizer_class}.step() applies the sum of this "
                                                        "backward()'s gradients and all earlier ones")]
    notes = [f"backward() adds into .grad; {optimizer_class}.step() does not clear it. No zero_grad() (or "
             "p.grad = None) ran between the previous step() and this backward(), so every step applies the sum "
             "of the gradients of all iterations so far, and the updates grow with each one (no error). "
             "Accumulating on purpose over several backward() calls is done by clearing after each step()"]
    helps = []
    receiver, first_backward = _receiver_and_first_backward(step_site, filename)
    if carried.added_nothing:
        # The backward() since the last step filled other parameters: clearing would not make
        # this step apply them. The optimizer stepped is likely not the one meant (one optimizer
        # passed under two names), or the step is one too many.
        primary.note = "this backward() fills none of the parameters this optimizer steps"
        related = [location_of(step_site, role="step", note=f"{optimizer_class}.step() applies again the gradients "
                                                            "its previous step() applied")]
        notes = [f"no backward() added to the gradients of the {optimizer_class}'s parameters since its previous "
                 "step(), and nothing cleared them: this step() applies the same gradients a second time, while "
                 "the gradients this backward() computed are applied by no step (no error)"]
        helps.append(Suggestion(f"check that {receiver or 'this optimizer'} is the optimizer of the parameters "
                                "this backward() fills (an optimizer passed for another, e.g. the generator's "
                                "given for the discriminator's), or remove this extra step()"))
    else:
        text = segment(filename, first_backward) if first_backward is not None else None
        scope, step_statement, _ = _step_at(step_site)
        branch = _cleared_in_branch_help(scope, step_statement, receiver) \
            if receiver is not None and step_statement is not None and step_site.filename == filename else None
        if branch is not None:
            helps.append(branch[0])
            related.insert(0, primary)
            primary = branch[1]
        elif text is not None:
            helps.append(Suggestion(f"clear the gradients before each backward(): call {receiver}.zero_grad() "
                                    "before it (once per step(), so that each step applies only its own gradients)",
                                    f"{receiver}.zero_grad()\n{text}", statement_location(filename, first_backward)))
        else:
            helps.append(Suggestion("call optimizer.zero_grad() once per step(), before the backward() calls whose "
                                    "gradients that step() should apply"))
    return Diagnosis(code=codes.GRADIENTS_NEVER_CLEARED, title=codes.title(codes.GRADIENTS_NEVER_CLEARED),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def partial_clear_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD229 before `optimizer.step()` (called from `stack`), or None: the gradients were cleared
    with `model.zero_grad()`, which left those of the optimizer's parameters outside the model in
    place, and a backward() added to them before this step (recording/optimizer_clears.py)."""
    found = recorder.optimizer_clears.partial_clear_at_step(optimizer)
    if found is None or found.site is None or not stack:
        return None
    if not any(found.seq < call.seq for call in recorder.backward_calls):
        return None
    filename = found.site.filename
    scope = Scope(filename, found.site.lineno)
    statement = scope.statement_at(found.site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    optimizer_class = type(optimizer).__name__
    shapes = []
    for parameter_ref, _gradient, _version in found.samples:
        parameter = parameter_ref()
        if parameter is not None:
            shapes.append(str(list(parameter.shape)))
    counted = f"{found.outside} parameter{'s' if found.outside != 1 else ''}"
    primary = statement_location(filename, statement, role="clear",
                                 note=f"clears the {found.module_class}'s gradients only: the {optimizer_class} also "
                                      f"steps {counted} outside it ({', '.join(shapes)}), whose gradients stay")
    related = [location_of(stack[0], role="step", note=f"{optimizer_class}.step() applies their gradients summed "
                                                       "over every iteration so far")]
    notes = [f"{found.module_class}.zero_grad() clears the gradients of the module's own parameters. The "
             f"{optimizer_class} was also given parameters that are not the module's (a loss module's, "
             "a second model's): their .grad is never cleared, each backward() adds to it, and every step "
             "applies the running sum of all their gradients so far (no error)"]
    # The caller's attribute (`self.optimizer`) before a global of the same object.
    name = next((known for known in found.caller_names if known.startswith("self.")), found.caller_names[0])
    helps = []
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "zero_grad" \
            and not statement.value.args and not statement.value.keywords:
        helps.append(Suggestion(f"clear through the optimizer, which covers every parameter it steps: "
                                f"call {name}.zero_grad()", f"{name}.zero_grad()",
                                statement_location(filename, statement)))
    else:
        helps.append(Suggestion(f"call {name}.zero_grad() (it clears every parameter the {optimizer_class} steps)"))
    return Diagnosis(code=codes.PARTIAL_CLEAR, title=codes.title(codes.PARTIAL_CLEAR), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def gradients_left_by_another_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD230 before `optimizer.step()` (called from `stack`), or None: an earlier backward() filled
    this optimizer's gradients and another optimizer's, the other one stepped on it, and this one's
    were still there, never cleared, when its own backward() added to them (recording/gradient_states.py)."""
    left = recorder.gradient_states.left_by_another_at_step(optimizer)
    if left is None or not stack or left.left_by.site is None or left.carried_into.site is None:
        return None
    left_site, adding_site, step_site = left.left_by.site, left.carried_into.site, stack[0]
    filename = adding_site.filename
    adding_statement = Scope(filename, adding_site.lineno).statement_at(adding_site.lineno)
    if adding_statement is None:
        return None
    receiver, first_backward = _receiver_and_first_backward(step_site, filename)
    this = receiver or type(optimizer).__name__
    other_site = left.step_stack[0] if left.step_stack else None
    other = _optimizer_named_at(other_site) or left.stepped_by
    if other == this:
        this, other = f"this {this}", f"the other {other}"
    primary = statement_location(filename, adding_statement, role="backward",
                                 note=f"this backward() adds to the gradients the earlier one left on {this}'s "
                                      "parameters: nothing cleared them in between")
    related = [
        location_of(left_site, role="left", note=f"this backward() fills the gradients of {other}'s parameters "
                                                 f"and of {this}'s"),
        location_of(other_site, role="other step", note=f"{other}.step() applies them; {this}'s stay"),
        location_of(step_site, role="step", note=f"{this}.step() applies the gradients of both backward() calls"),
    ]
    notes = [f"one backward() filled the gradients of two optimizers' parameters (a loss computed through both "
             f"models: a generator's loss through the discriminator, an actor's through the critic). {other} "
             f"stepped on them; {this}'s were not cleared, so its own backward() added to them and its step() "
             "also follows the other loss's objective (no error)"]
    if first_backward is not None and first_backward.lineno == adding_statement.lineno:
        helps = [Suggestion(f"clear {receiver}'s gradients before its own backward(): {receiver}.zero_grad() "
                            "before it", f"{receiver}.zero_grad()\n{segment(filename, adding_statement)}",
                            statement_location(filename, adding_statement))]
    else:
        helps = [Suggestion(f"call {receiver or 'optimizer'}.zero_grad() before the backward() whose gradients "
                            "its step() should apply")]
    return Diagnosis(code=codes.GRADIENTS_LEFT_BY_ANOTHER_LOSS, title=codes.title(codes.GRADIENTS_LEFT_BY_ANOTHER_LOSS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def gradients_added_by_another_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD176 before `optimizer.step()` (called from `stack`), or None: its own backward() filled its
    gradients, then another optimizer was cleared and that one's loss, computed through this one's
    model, was backpropagated into them too (recording/gradient_states.py)."""
    added = recorder.gradient_states.added_by_another_at_step(optimizer)
    if added is None or not stack or added.added_by.site is None or added.own_backward.site is None:
        return None
    adding_site, own_site, step_site = added.added_by.site, added.own_backward.site, stack[0]
    filename = adding_site.filename
    adding_statement = Scope(filename, adding_site.lineno).statement_at(adding_site.lineno)
    if adding_statement is None:
        return None
    this = _step_at(step_site)[2] or type(optimizer).__name__
    other_optimizer = added.other()
    other = f"the other {type(other_optimizer).__name__}" if other_optimizer is not None else "the other optimizer"
    primary = statement_location(filename, adding_statement, role="backward",
                                 note=f"this backward() of {other}'s loss also adds into the gradients of "
                                      f"{this}'s parameters, which its own backward() had just filled")
    related = [
        location_of(own_site, role="own backward", note=f"{this}'s own loss fills its gradients here"),
        location_of(step_site, role="step", note=f"{this}.step() applies the gradients of both losses"),
    ]
    notes = [f"{other} was cleared before this backward(), so this is its loss; but the loss is computed through "
             f"the model {this} trains (an actor's loss through the critic, a generator's through the "
             f"discriminator), so backward() also adds its gradients into {this}'s parameters, and {this}.step() "
             "then follows both objectives: the critic or discriminator is pushed to favour the other model's "
             "outputs (no error). Which change is meant cannot be read from the program, so this is advice"]
    helps = [Suggestion(f"keep this loss out of {this}'s parameters: turn their requires_grad off "
                        "(requires_grad_(False)) while this loss is computed through them and back on after it, or "
                        f"backward() it with inputs= the parameters of {other} only; or let {this} step before "
                        "this backward()")]
    return Diagnosis(code=codes.GRADIENTS_ADDED_BY_ANOTHER_LOSS,
                     title=codes.title(codes.GRADIENTS_ADDED_BY_ANOTHER_LOSS), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def clip_of_other_parameters_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD177 before `optimizer.step()` (called from `stack`), or None: the clipping calls since the
    last backward() were given only parameters that this optimizer does not hold and that backward()
    did not reach, while it reached this optimizer's: they clip gradients left from before, and the
    gradients this step applies go unclipped."""
    states = recorder.gradient_states
    reached, last = states.reached_by_last_backward, states.last_backward
    if reached is None or last is None or not stack:
        return None
    clips = [clip for clip in recorder.gradient_clips.clips if clip.seq > last.seq and clip.parameters]
    ids = _optimizer_parameter_ids(optimizer)
    if not clips or not ids & reached:
        return None
    clipped = [reference() for clip in clips for reference in clip.parameters]
    if any(p is None or id(p) in ids or id(p) in reached for p in clipped):
        return None
    clip, step_site = clips[-1], stack[0]
    if clip.site is None:
        return None
    filename = clip.site.filename
    scope = Scope(filename, clip.site.lineno)
    clip_statement = scope.statement_at(clip.site.lineno) if scope.tree is not None else None
    if clip_statement is None:
        return None
    this = _step_at(step_site)[2] or type(optimizer).__name__
    clip_location = statement_location(filename, clip_statement, role="clip",
                                       note=f"{clip.function} clips only parameters that {this} does not update and "
                                            "that the last backward() did not reach")
    related = [location_of(last.site, role="backward", note=f"this backward() fills the gradients {this} applies"),
               location_of(step_site, role="step", note=f"{this}.step() applies them unclipped")]
    primary = _caller_that_chose(clip, clip_statement, scope)
    if primary is not None:
        related.insert(0, clip_location)
    else:
        primary = clip_location
    notes = [f"the clipping call runs between this optimizer's backward() and its step(), but on other parameters: "
             f"their gradients are left from an earlier backward() (another loss or model), and {this}.step() "
             "applies its own gradients as backward() left them, never clipped (no error)"]
    helps = [Suggestion(f"clip the gradients that {this}.step() applies: give {clip.function} the parameters "
                        f"{this} updates (all of them, `[p for group in {this}.param_groups for p in group['params']]`, "
                        "or the layers the clipping is meant for; which ones is the program's choice)")]
    return Diagnosis(code=codes.CLIP_OF_OTHER_PARAMETERS, title=codes.title(codes.CLIP_OF_OTHER_PARAMETERS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _caller_that_chose(clip, clip_statement: ast.stmt, scope) -> "Location | None":
    """The call that passed the clipped module into the helper that clips it, when the clipping call's
    argument is one of the helper's parameters (`module.parameters()`, `module`): the line that
    chose what to clip. None otherwise."""
    call = next((node for node in ast.walk(clip_statement) if isinstance(node, ast.Call)
                 and call_name(node) == clip.function and node.args), None)
    argument = call.args[0] if call is not None else None
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute):
        argument = argument.func.value
    function = scope.node
    if not isinstance(argument, ast.Name) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or len(clip.stack) < 2:
        return None
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if argument.id not in names:
        return None
    caller_site = clip.stack[1]
    caller_scope = Scope(caller_site.filename, caller_site.lineno)
    caller_statement = caller_scope.statement_at(caller_site.lineno) if caller_scope.tree is not None else None
    if caller_statement is None:
        return None
    calls = [node for node in ast.walk(caller_statement) if isinstance(node, ast.Call)
             and (call_name(node) or "").split(".")[-1] == function.name]
    if len(calls) != 1:
        return None
    index = names.index(argument.id)
    if names and names[0] in ("self", "cls") and isinstance(calls[0].func, ast.Attribute):
        index -= 1
    if not 0 <= index < len(calls[0].args):
        return None
    passed = segment(caller_site.filename, calls[0].args[index])
    return statement_location(caller_site.filename, caller_statement, role="passed",
                              note=f"passes {passed} to {function.name}(), which clips its gradients; the optimizer "
                                   "stepped there does not update it, and this update's loss does not reach it")


def _optimizer_named_at(site) -> str | None:
    """`opt_g` for a site whose statement is `opt_g.step()`; None otherwise."""
    return _step_at(site)[2] if site is not None else None


__all__ = ["misplaced_clip_diagnosis", "clip_before_unscale_diagnosis", "double_unscale_diagnosis", "partial_clear_diagnosis", "clip_inside_accumulation_diagnosis",
           "gradients_never_cleared_diagnosis", "gradients_left_by_another_diagnosis",
           "gradients_added_by_another_diagnosis", "clip_of_other_parameters_diagnosis"]
