"""AD322: an optimizer's step() changed parameters that backward() gave no gradient.

torch.optim's optimizers skip a parameter whose `.grad` is None: a head the loss did not use, an
expert no token was routed to, keep their values. A hand-written optimizer (a Muon-style one,
KellerJordan/Muon#54) that gives such a parameter a zero gradient (`p.grad = torch.zeros_like(p)`)
and then applies its weight decay, or its momentum, to every parameter changes them anyway: the
unused head shrinks step after step, and nothing fails.

Evidence, all at run time, around one optimizer step (no closure):
- before the step, at least one parameter of the optimizer has a gradient (a backward() ran and
  reached the optimizer), and some parameters that require grad have none (`.grad is None`);
- after the step, such a parameter's values changed (beyond rounding: the largest change is more
  than 1e-6 of its largest value), the same tensor.
Only the first three steps of each optimizer are looked at, and only when the parameters without a
gradient hold at most 2**24 elements: their values are copied before the step and compared after
it (the copies are dropped at once). torch.optim's own optimizers never change such a parameter, so
they are never reported.

The line named: in the optimizer's step() (a user's file), an `if P.grad is None:` whose body gives
P a gradient (assigns `P.grad`) and goes on; the help replaces that statement with `continue`, as
torch.optim does. Otherwise the step() call is named and the help is advice.
"""

from __future__ import annotations

import ast
import inspect
import weakref

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import function_starting_at, location_of, statement_location
from autograd_doctor.recording.frames import is_internal_file
from autograd_doctor.recording.gradient_states import grad_of

STEPS_LOOKED_AT = 3
MAX_ELEMENTS = 1 << 24
RELATIVE_CHANGE = 1e-6


class UngradedStepWrites:
    """AD322: copies taken before a step, compared after it; reported once per optimizer."""

    def __init__(self):
        self._steps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> steps looked at
        self._pending = None  # (optimizer ref, [(parameter ref, copy)], stack)

    def before_step(self, optimizer, stack) -> None:
        self._pending = None
        try:
            count = self._steps.get(optimizer, 0)
            if count >= STEPS_LOOKED_AT:
                return
            self._steps[optimizer] = count + 1
        except TypeError:
            return
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())
                      if isinstance(p, torch.Tensor)]
        if not any(grad_of(p) is not None for p in parameters):
            return
        without = [p for p in parameters
                   if p.requires_grad and p.is_leaf and grad_of(p) is None and p.is_floating_point()
                   and p.layout == torch.strided and p.device.type != "meta"]
        if not without or sum(p.numel() for p in without) > MAX_ELEMENTS:
            return
        with torch.no_grad():
            copies = [(weakref.ref(p), p.detach().clone()) for p in without]
        self._pending = (weakref.ref(optimizer), copies, stack)

    def after_step(self, optimizer) -> Diagnosis | None:
        pending, self._pending = self._pending, None
        if pending is None or pending[0]() is not optimizer:
            return None
        changed = []
        with torch.no_grad():
            for reference, before in pending[1]:
                parameter = reference()
                if parameter is None or parameter.shape != before.shape or parameter.dtype != before.dtype:
                    continue
                after = parameter.detach()
                if torch.equal(after, before):
                    continue
                difference = float((after.double() - before.double()).abs().max())
                scale = float(before.double().abs().max())
                if difference == difference and difference > RELATIVE_CHANGE * max(scale, 1e-12):
                    changed.append((parameter, difference / max(scale, 1e-12), grad_of(parameter) is not None))
        if not changed:
            return None
        self._steps[optimizer] = STEPS_LOOKED_AT  # reported: not looked at again
        return _diagnosis(optimizer, changed, pending[2])


def _step_function(optimizer):
    step = getattr(type(optimizer), "step", None)
    try:
        step = inspect.unwrap(step)
        filename = inspect.getsourcefile(step)
        _, first = inspect.getsourcelines(step)
    except (TypeError, OSError, ValueError):
        return None, None
    if filename is None or is_internal_file(filename):
        return None, None
    return filename, first


def _is_grad_none(test: ast.expr) -> str | None:
    """`NAME.grad is None` -> NAME."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None \
            and isinstance(test.left, ast.Attribute) and test.left.attr == "grad" \
            and isinstance(test.left.value, ast.Name):
        return test.left.value.id
    return None


def _gradient_given(filename: str, first: int) -> ast.stmt | None:
    """In the step function starting at `first`: the statement that gives a parameter without a
    gradient one and goes on (`if p.grad is None: p.grad = ...`, no continue/return/raise/break)."""
    function = function_starting_at(filename, first)
    if function is None or function.name != "step":
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or node.orelse:
            continue
        name = _is_grad_none(node.test)
        if name is None or len(node.body) != 1:
            continue
        body = node.body[0]
        if isinstance(body, ast.Assign) and len(body.targets) == 1 \
                and isinstance(body.targets[0], ast.Attribute) and body.targets[0].attr == "grad" \
                and isinstance(body.targets[0].value, ast.Name) and body.targets[0].value.id == name:
            return body
    return None


def _describe(parameter) -> str:
    return f"{str(parameter.dtype).replace('torch.', '')}{list(parameter.shape)}"


def _diagnosis(optimizer, changed: list, stack) -> Diagnosis | None:
    optimizer_class = type(optimizer).__name__
    step_site = stack[0] if stack else None
    filename, first = _step_function(optimizer)
    given = _gradient_given(filename, first) if filename is not None else None
    shapes = ", ".join(_describe(p) for p, _, _ in changed[:3]) + (", ..." if len(changed) > 3 else "")
    largest = max(change for _, change, _ in changed)
    filled = sum(1 for _, _, has_grad in changed if has_grad)
    notes = [f"{len(changed)} parameter(s) that require grad had no gradient before {optimizer_class}.step() "
             f"({shapes}), while others had one: backward() did not reach them",
             f"the step changed them anyway (the largest change is {largest:.3g} of the parameter's largest value)"
             + (f"; it gave {filled} of them a gradient itself" if filled else ""),
             "torch.optim's optimizers skip a parameter whose .grad is None, so that a part the loss did not use "
             "keeps its values; a weight decay or momentum applied to it moves it with no gradient behind it "
             "(no error)"]
    helps = []
    related = [location_of(step_site, role="step", note=f"{optimizer_class}.step() changes parameters "
                                                          "that got no gradient")]
    if given is not None:
        primary = statement_location(filename, given, role="grad", note="gives a parameter without a gradient "
                                                                         "one, and the step goes on to change it")
        helps.append(Suggestion("skip a parameter whose .grad is None, as torch.optim's optimizers do: the parts "
                                "the loss did not use keep their values, the others step as before",
                                "continue", statement_location(filename, given)))
    else:
        primary = related.pop(0)
        helps.append(Suggestion(f"in {optimizer_class}.step(), skip a parameter whose .grad is None (`if p.grad "
                                "is None: continue`) before its weight decay and update, as torch.optim does"))
    if primary is None:
        return None
    return Diagnosis(code=codes.UNGRADED_STEP_WRITES, title=codes.title(codes.UNGRADED_STEP_WRITES),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["UngradedStepWrites"]
