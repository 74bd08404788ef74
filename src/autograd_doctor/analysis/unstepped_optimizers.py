"""AD317: an optimizer that never steps and never clears, while backward() calls keep adding into
its parameters' gradients: nothing trains, and the gradients only grow.

A framework's optimizer wrapper that steps and clears only every N-th call, guarded by
`accumulation_steps > 1 and step % accumulation_steps == 0` (TorchEasyRec#226): with the default of 1
the wrapped optimizer's `step()` and `zero_grad()` never run. The other optimizer codes need an event
this program never produces: AD221 a `zero_grad()`, AD209 and AD214 a `step()`.

Recorded cheaply (recording/optimizer_groups.py): each optimizer built while the doctor runs (the
first `add_param_group` of its construction), and after each backward(), for the ones that have
neither stepped nor cleared, whether the `.grad` of one of their parameters is the same tensor as
after the previous backward() with a higher version (the backward() added into it). Judged once,
when the doctor stops: an optimizer that never stepped, whose `zero_grad()` never ran, whose sampled
`.grad` was added into by at least two backward() calls and never replaced or set to None, whose
sampled parameter was not changed in place (no hand-written update), and whose parameters no
optimizer that stepped holds (a wrapper over another optimizer's groups).
Not judged when the program ended with an exception (`Doctor.stop(failed=True)`): a run cut short
has not shown its whole course.

The line named is the condition of the user's guarded call that should reach it, when one is found cheaply: the
object that holds the optimizer as an attribute (one look at its referrers) has a method `step` in
the user's files whose `self.<attribute>.step()` sits under an `if`: that call never ran, and the
`if`'s condition (its first line) is named, the call shown with it. Else the
optimizer's construction. The help is advice (the guard's intent is the program's).
"""

from __future__ import annotations

import ast
import gc
import inspect
import textwrap

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import display_path, location_of, source_line
from autograd_doctor.recording.frames import is_internal_file

# backward() calls that added into the same .grad after the first one.
EVIDENCE = 1


def unstepped_optimizer_diagnoses(recorder) -> list[Diagnosis]:
    clears = recorder.optimizer_clears
    found = []
    for entry in recorder.optimizer_groups.built:
        optimizer = entry.optimizer()
        if optimizer is None or entry.replaced or entry.grew < EVIDENCE or entry.parameter is None:
            continue
        if optimizer in clears.stepped or id(optimizer) in clears.by_optimizer:
            continue
        parameter = entry.parameter()
        if parameter is None or parameter.grad is None or parameter.grad is not entry.gradient() \
                or parameter._version != entry.parameter_version:
            continue  # cleared some other way, or updated by hand
        parameters = [p for group in optimizer.param_groups for p in group.get("params", ())]
        if any(p in clears.stepped_parameters for p in parameters):
            continue  # another optimizer steps these parameters
        found.append(_diagnosis(entry, optimizer, len(parameters)))
    return [d for d in found if d is not None]


def _owners(optimizer):
    """(object, attribute names) of the objects that hold `optimizer` as an attribute."""
    for referrer in gc.get_referrers(optimizer):
        if isinstance(referrer, dict):
            # a plain instance __dict__ (older Pythons): its owner refers to it
            for owner in gc.get_referrers(referrer):
                if getattr(owner, "__dict__", None) is referrer:
                    yield owner, [k for k, v in referrer.items() if v is optimizer and isinstance(k, str)]
            continue
        attributes = getattr(referrer, "__dict__", None)
        if isinstance(attributes, dict) and not isinstance(referrer, type):
            # an object whose attributes are stored inline (Python 3.11+): it refers to the optimizer
            names = [k for k, v in attributes.items() if v is optimizer and isinstance(k, str)]
            if names:
                yield referrer, names


def _guarded_step(optimizer):
    """(file, the `self.<attr>.step()` line, the line of the `if` above it, the holder's class) in a
    user's object that holds `optimizer` as an attribute."""
    for owner, names in _owners(optimizer):
        method = getattr(type(owner), "step", None)
        if not names or method is None or not inspect.isfunction(method):
            continue
        try:
            filename = inspect.getsourcefile(method)
            lines, first = inspect.getsourcelines(method)
        except (OSError, TypeError):
            continue
        if filename is None or is_internal_file(filename):
            continue
        try:
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.If):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                        and inner.func.attr == "step" and isinstance(inner.func.value, ast.Attribute) \
                        and inner.func.value.attr in names and isinstance(inner.func.value.value, ast.Name) \
                        and inner.func.value.value.id == "self":
                    return filename, inner.lineno + first - 1, node.test.lineno + first - 1, type(owner).__name__
    return None


def _line_location(filename: str, line: int, role: str, note: str) -> Location:
    text = source_line(filename, line)
    column = len(text) - len(text.lstrip())
    return Location(file=display_path(filename), line=line, column=column, end_line=line,
                    end_column=len(text.rstrip()), source=text.strip(), role=role, note=note)


def _diagnosis(entry, optimizer, total: int) -> Diagnosis | None:
    kind = type(optimizer).__name__
    built = location_of(entry.site, role="optimizer", note=f"{kind} built here: its step() and zero_grad() never ran")
    notes = [f"{entry.grew + 1} backward() calls added into the gradients of the {total} parameters {kind} holds "
             "while neither its step() nor its zero_grad() ever ran: the parameters never change and their "
             "gradients only grow (no error)"]
    try:
        guarded = _guarded_step(optimizer)
    except Exception:
        guarded = None
    if guarded is not None:
        filename, call_line, if_line, owner = guarded
        # The line to change is the condition, not the call under it.
        primary = _line_location(filename, if_line, role="guard",
                                 note=f"the condition in {owner}.step() that {kind}.step() sits under: never true "
                                      "when reached")
        related = [_line_location(filename, call_line, role="step", note=f"never ran: {kind}.step() was never called")]
        if built is not None:
            related.append(built)
        helps = [Suggestion(f"check the condition at line {if_line}: it must be true on the calls meant to apply the "
                            f"gradients (and {kind}.zero_grad() must run after them)")]
    else:
        primary, related = built, []
        helps = [Suggestion(f"call step() on this {kind} after the backward() calls whose gradients it should "
                            "apply, and zero_grad() before the next ones")]
    if primary is None:
        return None
    return Diagnosis(code=codes.OPTIMIZER_NEVER_STEPS_NOR_CLEARS,
                     title=codes.title(codes.OPTIMIZER_NEVER_STEPS_NOR_CLEARS), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


__all__ = ["unstepped_optimizer_diagnoses"]
