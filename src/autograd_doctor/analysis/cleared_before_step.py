"""AD153: zero_grad() clears gradients that no step() has applied yet, at one backward() site
whose gradients other steps do apply.

Gradient accumulation calls backward() on several micro-batches and step() once: the gradients
add up in `.grad` until the step uses them, and only then are they cleared. A `zero_grad()` left
at the top of every micro-batch clears what the previous micro-batches computed, so each step
applies the last micro-batch's gradient alone (divided by the accumulation factor), and nothing
fails. Judged once, when the doctor stops, from what ran (recording/optimizer_clears.py): for an
optimizer that stepped, a backward() call site (its user stack) whose gradients a `zero_grad()`
cleared before any step at least twice, and at least as often as a step applied them. A site whose
gradients no step ever applies (a GAN's discriminator loss reaching the generator, cleared by the
generator's `zero_grad()`) is a choice, not this mistake, and is not reported.
"""

from __future__ import annotations

import ast
import textwrap

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.model import Location
from autograd_doctor.diagnosis.source import display_path, location_of, parse_file, segment, source_line, statement_at

# zero_grad() calls that cleared a site's unapplied gradients before it is reported.
EVIDENCE = 2


def cleared_before_step_diagnoses(recorder) -> list[Diagnosis]:
    log = recorder.optimizer_clears
    found: dict = {}  # the zero_grad() site -> its diagnosis (one per line, however many optimizers)
    for entry in log.by_optimizer.values():
        optimizer = entry.optimizer_ref()
        if optimizer is None or optimizer not in log.stepped:
            continue
        for key, cleared in entry.cleared_unapplied.items():
            applied = entry.applied.get(key, 0)
            if applied == 0 and _lost_every_time(log, entry, key, cleared):
                if cleared.clear_site is not None and cleared.backward_site is not None \
                        and cleared.clear_site not in found:
                    diagnosis = _lost_diagnosis(cleared, entry.lost[key], type(optimizer).__name__)
                    if diagnosis is not None:
                        found[cleared.clear_site] = diagnosis
                continue
            if cleared.count < EVIDENCE or applied < 1 or cleared.count < applied:
                continue
            if cleared.clear_site is None or cleared.backward_site is None or cleared.clear_site in found:
                continue
            diagnosis = _diagnosis(cleared, applied)
            if diagnosis is not None:
                found[cleared.clear_site] = diagnosis
    return list(found.values())


def _lost_every_time(log, entry, key, cleared) -> bool:
    """AD312's evidence: the site's gradients were cleared before a step at least twice, no step of
    any followed optimizer ever applied them, and each step after such a clear found every parameter
    that held them without a gradient (none got one again from another backward())."""
    lost = entry.lost.get(key, 0)
    if cleared.count < EVIDENCE or lost < EVIDENCE or key in entry.refilled:
        return False
    return not any(other.applied.get(key, 0) for other in log.by_optimizer.values())


def _lost_diagnosis(cleared, lost: int, optimizer_class: str) -> Diagnosis | None:
    """AD312: backward() calls whose gradients this zero_grad() clears before the step, on parameters
    that then get no gradient before it: they never train (InfoPro's local losses backpropagated in
    forward(), cleared by the runner's hook between its final backward() and step())."""
    primary = location_of(cleared.clear_site, role="zero_grad",
                          note="clears the gradients of that backward() before any step() applies them")
    if primary is None:
        return None
    backward = location_of(cleared.backward_site, role="backward",
                           note=f"its gradients were cleared before a step {cleared.count} times and applied by "
                                "none")
    notes = [f"at {lost} steps, the {optimizer_class}'s parameters that these gradients reached had no gradient "
             "left (no other backward() reaches them before the step): the step skips them, and they never train "
             "(no error). The same optimizer clears them and then steps"]
    helps = [Suggestion("clear the gradients before the forward pass whose backward() calls compute them (at the "
                        "start of the iteration), not between those backward() calls and the step() (unverified: "
                        "where the iteration starts is the program's structure)")]
    return Diagnosis(code=codes.CLEARED_BEFORE_ANY_STEP, title=codes.title(codes.CLEARED_BEFORE_ANY_STEP),
                     severity="warning", primary=primary,
                     related=[backward] if backward is not None else [], notes=notes, help=helps)


def _diagnosis(cleared, applied: int) -> Diagnosis | None:
    primary = location_of(cleared.clear_site, role="zero_grad",
                          note="clears gradients that step() has not applied yet")
    if primary is None:
        return None
    backward = location_of(cleared.backward_site, role="backward",
                           note=f"its gradients were cleared before a step {cleared.count} times, "
                                f"applied by a step {applied} times")
    notes = ["gradients add up in .grad over the backward() calls before a step(), and zero_grad() "
             "throws them away: clearing them between backward() and the step() that should apply "
             "them leaves that step the last micro-batch's gradient alone (no error)"]
    helps = _moved_after_step(cleared.clear_site.filename, primary.line, cleared.caller_names,
                              cleared.gating_wrappers) or [
        Suggestion("clear the gradients only after step() has applied them: move this zero_grad() "
                   "right after the step() (or delete it where the gradients are already cleared "
                   "after the step)")]
    return Diagnosis(code=codes.CLEARED_BEFORE_STEP, title=codes.title(codes.CLEARED_BEFORE_STEP),
                     severity="warning", primary=primary,
                     related=[backward] if backward is not None else [], notes=notes, help=helps)


def _moved_after_step(filename: str, line: int, caller_names: tuple = (),
                      gating_wrappers: tuple = ()) -> list[Suggestion]:
    """The change, when the source shows it: the zero_grad() is a statement of a loop's body and
    a later statement of that body (or of a block inside it) steps the same optimizer. If a
    zero_grad() follows that step already, this one goes; else it moves right after the step.
    Where the step comes before the clear, under a gate the clear is not under, the clear goes
    under that gate (`_under_the_steps_gate`)."""
    clear = statement_at(filename, line)
    tree = parse_file(filename)
    receiver = _zero_grad_receiver(filename, clear)
    if tree is None or receiver is None:
        return []
    loop = next((node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While))
                 and any(statement is clear for statement in node.body)), None)
    if loop is None:
        return []
    later = loop.body[next(i for i, statement in enumerate(loop.body) if statement is clear) + 1:]
    found = _step_of(filename, later, receiver)
    if found is None:
        return _under_the_steps_gate(filename, tree, loop, clear, receiver, caller_names, gating_wrappers)
    block, step = found
    after_step = block[next(i for i, statement in enumerate(block) if statement is step) + 1:]
    # Another optimizer's zero_grad() there (a GAN's) does not clear this one's gradients; a
    # module's (`model.zero_grad()`) does, and a module is never stepped.
    stepped = {segment(filename, node.func.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Attribute) and node.func.attr == "step"}
    cleared_after = [_zero_grad_receiver(filename, statement) for statement in after_step]
    if any(name == receiver or (name is not None and name not in stepped) for name in cleared_after):
        # Shown as the lines around it without it: a help's change is a replacement text.
        index = next(i for i, statement in enumerate(loop.body) if statement is clear)
        neighbour = loop.body[index + 1] if index + 1 < len(loop.body) else loop.body[index - 1]
        first, last = min(clear, neighbour, key=_line), max(clear, neighbour, key=_line)
        change = _span_without(filename, first, last, clear)
        message = ("clear the gradients only after step() has applied them: delete this zero_grad(); "
                   f"the one after the step() on line {step.lineno} already clears them")
    else:
        change = _span_without(filename, clear, step, clear, moved_after=step)
        message = ("clear the gradients only after step() has applied them: move this zero_grad() "
                   f"right after the step() on line {step.lineno}")
    if change is None:
        return []
    replacement, location = change
    return [Suggestion(message, replacement, location)]


def _under_the_steps_gate(filename: str, tree: ast.AST, loop: ast.For | ast.While, clear: ast.stmt,
                          receiver: str, caller_names: tuple, gating_wrappers: tuple) -> list[Suggestion]:
    """The zero_grad() runs at every pass of the loop, after a step() that applies the gradients
    only at some (the run showed it: gradients cleared unapplied, at least as often as applied).
    The nearest statement before it that steps is the gate:
    - `if cond: optimizer.step()`: the clear moves into that block, right after the step;
    - `wrapper.step()`, a wrapper of the optimizer that gates its own step() and zero_grad() (the
      recording saw its class define both, accelerate's AcceleratedOptimizer under `accumulate()`):
      a model's zero_grad() becomes the wrapper's, which clears when its step() applies.
    The step must be the same optimizer's: called on the clear's receiver, or, for a model's
    zero_grad() (a name never stepped), on a name by which the recording saw the caller hold the
    optimizer (or the gating wrapper)."""
    index = next(i for i, statement in enumerate(loop.body) if statement is clear)
    stepped = {segment(filename, node.func.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Attribute) and node.func.attr == "step"}
    for statement in reversed(loop.body[:index]):
        if not any(_step_call(node) for node in ast.walk(statement)):
            continue
        if isinstance(statement, ast.If) and not statement.orelse:
            step = next((inner for inner in statement.body if _step_call(getattr(inner, "value", None))), None)
            if step is None or any(_zero_grad_receiver(filename, inner) for inner in statement.body):
                return []
            stepper = segment(filename, step.value.func.value)
            if stepper != receiver and (receiver in stepped or stepper not in caller_names):
                return []
            change = _span_without(filename, statement, clear, clear, moved_after=step)
            if change is None:
                return []
            replacement, location = change
            return [Suggestion("clear the gradients only after step() has applied them: move this zero_grad() "
                               f"right after the step() on line {step.lineno}, under its condition",
                               replacement, location)]
        if _step_call(getattr(statement, "value", None)) and isinstance(statement, ast.Expr):
            wrapper = segment(filename, statement.value.func.value)
            if wrapper not in gating_wrappers or wrapper == receiver or receiver in stepped:
                return []
            call_text = segment(filename, clear.value)
            replacement = wrapper + call_text[len(receiver):]
            location = Location(display_path(filename), clear.lineno, clear.col_offset, end_line=clear.end_lineno,
                                source=source_line(filename, clear.lineno).strip())
            return [Suggestion("clear the gradients when step() applies them: clear through "
                               f"{wrapper}, whose zero_grad() runs when its step() does", replacement, location)]
        return []
    return []


def _step_call(node: ast.AST | None) -> bool:
    """`x.step()` without arguments (a scaler's `scaler.step(optimizer)` is not a gate's step)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"
            and not node.args and not node.keywords)


def _line(statement: ast.stmt) -> int:
    return statement.lineno


def _span_without(filename: str, first: ast.stmt, last: ast.stmt, dropped: ast.stmt,
                  moved_after: ast.stmt | None = None) -> tuple[str, Location] | None:
    """The lines from `first` to `last` without `dropped`'s, and with `dropped` again right after
    `moved_after` when given, indented from `first`'s column; with the span's location."""
    base = first.col_offset
    lines = {number: source_line(filename, number) for number in range(first.lineno, last.end_lineno + 1)}
    if any(text.strip() and len(text) - len(text.lstrip()) < base for text in lines.values()):
        return None
    kept = []
    for number, text in lines.items():
        if not dropped.lineno <= number <= dropped.end_lineno:
            kept.append(text[base:])
        if moved_after is not None and number == moved_after.end_lineno:
            kept.append(textwrap.indent(segment(filename, dropped), " " * (moved_after.col_offset - base)))
    location = Location(display_path(filename), first.lineno, base, end_line=last.end_lineno,
                        source=lines[first.lineno].strip())
    return "\n".join(kept), location


def _zero_grad_receiver(filename: str, statement: ast.AST | None) -> str | None:
    """`optimizer` for the statement `optimizer.zero_grad()` (any arguments)."""
    if (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "zero_grad"):
        return segment(filename, statement.value.func.value)
    return None


def _step_of(filename: str, statements: list, receiver: str):
    """(the block holding it, the statement) for the first `receiver.step()` or
    `scaler.step(receiver)` among `statements` and the blocks of their if/with/try statements
    (not of nested loops or functions: a step there runs another number of times)."""
    for statement in statements:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "step"
                and receiver in (segment(filename, call.func.value), *(segment(filename, a) for a in call.args))):
            return statements, statement
        if isinstance(statement, (ast.If, ast.With, ast.Try)):
            for block in (statement.body, getattr(statement, "orelse", []), getattr(statement, "finalbody", [])):
                found = _step_of(filename, block, receiver)
                if found is not None:
                    return found
    return None


__all__ = ["cleared_before_step_diagnoses"]
