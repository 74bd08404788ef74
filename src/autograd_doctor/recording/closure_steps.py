"""Remember `step(closure)` calls of an optimizer that evaluates its closure several times per
step (L-BFGS) in which the closure ran no backward().

L-BFGS calls the closure to re-evaluate the loss at each trial point and reads the gradients the
closure's backward() leaves in `.grad`. A closure that only returns a loss computed before the
step (`def closure(): return loss`) gives every evaluation the same loss and the same, stale
gradients: L-BFGS stops early or walks a path the objective never gave, and nothing fails. The
optimizer step hooks (optimizer_steps.py) tell this log when such a step starts and ends; the
backward() calls the recorder numbered in between say whether the closure backpropagated.
analysis/stale_closure.py reads the log when the doctor stops (AD154). Only the first few steps
are kept, as sites and code objects (no tensor, no optimizer).

The same steps tell whether the closure clears the gradients before its backward() (AD180):
L-BFGS reads `.grad` after each evaluation as the gradient at that trial point, so a closure that
does not clear them hands it the sum of every evaluation so far. For the duration of one step
only, the first parameter's gradient tensor and its version are kept: without a clear, each
backward() after the first adds into that same tensor in place (one version each), while a
`zero_grad()` in the closure gives each evaluation a new tensor (or zeroes it in place, one more
version each). Judged at the step's end, for a step that evaluated the closure twice or more.
Both are held by weak references: a step that raises never reaches its end, and what it started
with must not outlive the user's own references.
"""

from __future__ import annotations

from dataclasses import dataclass
import weakref
from types import CodeType

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack

# Steps kept (the first ones: each is one report's evidence).
MAX_KEPT = 4


@dataclass
class ClosureWithoutBackward:
    """One step(closure) in which the closure ran no backward(): where step() was called, and the
    closure's code (its def line)."""

    step_site: Site | None
    closure_code: CodeType | None


@dataclass
class ClosureWithoutClearing:
    """One step(closure) whose closure evaluations added their gradients to each other: where
    step() was called, the closure's code, and how many evaluations the step made."""

    step_site: Site | None
    closure_code: CodeType | None
    evaluations: int


@dataclass
class _GradientAtStart:
    """For one running step: the first parameter, its gradient tensor (or None) and that tensor's
    version when the step started, and L-BFGS's count of closure evaluations so far (the tensors
    by weak reference)."""

    parameter: weakref.ref
    gradient: weakref.ref | None
    version: int
    evaluations: int


class ClosureSteps:
    def __init__(self):
        self.started_seq: dict[int, int] = {}  # id(optimizer) -> the recorder's clock at step start
        self.without_backward: list[ClosureWithoutBackward] = []
        self.without_clearing: list[ClosureWithoutClearing] = []
        self._at_start: dict[int, _GradientAtStart] = {}  # id(optimizer) -> kept while its step runs

    def started(self, optimizer, closure, seq: int) -> None:
        if _reevaluates(optimizer, closure):
            self.started_seq[id(optimizer)] = seq
            if len(self.without_clearing) < MAX_KEPT:
                at_start = _gradient_at_start(optimizer)
                if at_start is not None:
                    self._at_start[id(optimizer)] = at_start

    def done(self, optimizer, closure, backward_calls) -> None:
        start = self.started_seq.pop(id(optimizer), None)
        at_start = self._at_start.pop(id(optimizer), None)  # the step's tensors are not kept past it
        if start is None:
            return
        calls = sum(1 for call in backward_calls if call.seq > start)
        if calls == 0:
            if len(self.without_backward) < MAX_KEPT:
                stack = capture_user_stack(2, limit=1)
                self.without_backward.append(ClosureWithoutBackward(stack[0] if stack else None,
                                                                    getattr(closure, "__code__", None)))
            return
        if at_start is None or len(self.without_clearing) >= MAX_KEPT:
            return
        parameter = at_start.parameter()
        if parameter is None:
            return
        evaluations = _evaluations(optimizer, parameter) - at_start.evaluations
        if evaluations >= 2 and calls == evaluations and _accumulated(parameter, at_start, calls):
            stack = capture_user_stack(2, limit=1)
            self.without_clearing.append(ClosureWithoutClearing(stack[0] if stack else None,
                                                                getattr(closure, "__code__", None), evaluations))


def _first_parameter(optimizer):
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            if parameter.requires_grad:
                return parameter
    return None


def _evaluations(optimizer, parameter) -> int:
    """L-BFGS's own count of closure evaluations (its state's `func_evals`)."""
    return int(optimizer.state.get(parameter, {}).get("func_evals", 0))


def _gradient_at_start(optimizer) -> _GradientAtStart | None:
    parameter = _first_parameter(optimizer)
    if parameter is None:
        return None
    gradient = parameter.grad
    return _GradientAtStart(weakref.ref(parameter), weakref.ref(gradient) if gradient is not None else None,
                            gradient._version if gradient is not None else 0, _evaluations(optimizer, parameter))


def _accumulated(parameter: torch.Tensor, at_start: _GradientAtStart, calls: int) -> bool:
    """Whether the step's `calls` backward() calls (one per evaluation) all added into one gradient
    tensor, never cleared: the tensor the step started with, one version more per call; or, from
    no gradient, the tensor the first call made, one version more per later call."""
    gradient = parameter.grad
    if gradient is None or gradient.is_sparse:
        return False
    if at_start.gradient is not None:
        return gradient is at_start.gradient() and gradient._version - at_start.version == calls
    return gradient._version == calls - 1


def _reevaluates(optimizer, closure) -> bool:
    """An L-BFGS step with a closure and more than one evaluation allowed."""
    if closure is None or not isinstance(optimizer, torch.optim.LBFGS):
        return False
    return all(group.get("max_iter", 1) > 1 for group in optimizer.param_groups)


__all__ = ["ClosureSteps", "ClosureWithoutBackward", "ClosureWithoutClearing"]
