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
"""

from __future__ import annotations

from dataclasses import dataclass
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


class ClosureSteps:
    def __init__(self):
        self.started_seq: dict[int, int] = {}  # id(optimizer) -> the recorder's clock at step start
        self.without_backward: list[ClosureWithoutBackward] = []

    def started(self, optimizer, closure, seq: int) -> None:
        if _reevaluates(optimizer, closure):
            self.started_seq[id(optimizer)] = seq

    def done(self, optimizer, closure, backward_calls) -> None:
        start = self.started_seq.pop(id(optimizer), None)
        if start is None or len(self.without_backward) >= MAX_KEPT:
            return
        if any(call.seq > start for call in backward_calls):
            return
        stack = capture_user_stack(2, limit=1)
        self.without_backward.append(ClosureWithoutBackward(stack[0] if stack else None,
                                                            getattr(closure, "__code__", None)))


def _reevaluates(optimizer, closure) -> bool:
    """An L-BFGS step with a closure and more than one evaluation allowed."""
    if closure is None or not isinstance(optimizer, torch.optim.LBFGS):
        return False
    return all(group.get("max_iter", 1) > 1 for group in optimizer.param_groups)


__all__ = ["ClosureSteps", "ClosureWithoutBackward"]
