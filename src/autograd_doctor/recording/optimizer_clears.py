"""Remember the user's `optimizer.zero_grad()` calls that throw gradients away.

`zero_grad()` clears the gradients a backward() left on the optimizer's parameters; `step()` is
what applies them. An optimizer whose `zero_grad()` runs every iteration while its `step()` is
never called (forgotten after `loss_d.backward()`) trains nothing, and nothing fails. While a
doctor runs, `torch.optim.Optimizer.zero_grad` is wrapped: for a call on parameters that hold
gradients (non-zero ones, for `set_to_none=False`), the log keeps the optimizer (weakly), where
the call was made, and where the first backward() since the optimizer's previous `zero_grad()`
was called (the one whose gradients are thrown away). The optimizer step hooks
(optimizer_steps.py) note which optimizers ever stepped; analysis/never_stepped.py reads both
when the doctor stops (AD221). Only weak references are kept.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.identity import IdentitySet
from autograd_doctor.recording.own_frames import call_as_caller, own_work_done, own_work_started
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Parameters whose gradients are looked at per call (the smallest of the first few: cheap).
SAMPLED_PARAMETERS = 8
# Optimizers followed per recorder.
MAX_OPTIMIZERS = 16


@dataclass
class ThrownAway:
    """One zero_grad() call that cleared gradients: where it was called, and the backward() whose
    gradients it threw away (the first one since the optimizer's previous zero_grad())."""

    clear_site: Site | None
    backward_site: Site | None


@dataclass
class OptimizerClears:
    optimizer_ref: weakref.ref
    last_clear_seq: int = 0
    thrown_away: list = field(default_factory=list)  # ThrownAway, oldest first (the first few)


class OptimizerClearLog:
    """Per recorder: the optimizers whose zero_grad() threw gradients away, and the optimizers
    that stepped (by identity: an optimizer made anew each epoch takes a freed one's id)."""

    def __init__(self):
        self.by_optimizer: dict[int, OptimizerClears] = {}
        self.stepped = IdentitySet()
        # The parameters of the optimizers that stepped, taken at their first step: an
        # optimizer that only clears may leave the stepping to another one over the same
        # parameters (SAM wraps a base optimizer built on its own param_groups).
        self.stepped_parameters = IdentitySet()

    def step_done(self, optimizer) -> None:
        if optimizer in self.stepped:
            return
        self.stepped.add(optimizer)
        self.stepped_parameters.update(p for group in optimizer.param_groups for p in group.get("params", ()))

    def cleared(self, optimizer, seq: int, backward_calls) -> None:
        entry = self.by_optimizer.get(id(optimizer))
        if entry is None or entry.optimizer_ref() is not optimizer:
            if len(self.by_optimizer) >= MAX_OPTIMIZERS:
                # Room goes to live optimizers first: else whether a later one is followed would
                # depend on whether it happens to take a dead one's address (and its entry).
                self.by_optimizer = {key: known for key, known in self.by_optimizer.items()
                                     if known.optimizer_ref() is not None}
            if len(self.by_optimizer) >= MAX_OPTIMIZERS:
                return
            entry = self.by_optimizer[id(optimizer)] = OptimizerClears(weakref.ref(optimizer))
        previous, entry.last_clear_seq = entry.last_clear_seq, seq
        if optimizer in self.stepped or len(entry.thrown_away) >= 4 or not _holds_gradients(optimizer):
            return
        since = [call for call in backward_calls if previous < call.seq < seq]
        stack = capture_user_stack(2, limit=1)
        entry.thrown_away.append(ThrownAway(stack[0] if stack else None, since[0].site if since else None))


def _holds_gradients(optimizer) -> bool:
    """Whether the smallest of the optimizer's first few parameters holds a non-zero gradient."""
    parameters = [p for group in optimizer.param_groups for p in group.get("params", ())][:SAMPLED_PARAMETERS]
    if not parameters:
        return False
    smallest = min(parameters, key=lambda p: p.numel())
    gradient = smallest.grad
    return gradient is not None and bool(gradient.detach().any())


def _recording(original):
    @functools.wraps(original)
    def zero_grad(self, *args, **kwargs):
        started = own_work_started()  # a Tensor subclass's __torch_function__ does not see our reads
        try:
            for recorder in list(_wrapped.recorders):
                recorder.optimizer_clears.cleared(self, next(recorder.seq), recorder.backward_calls)
        except Exception:
            pass
        finally:
            own_work_done(started)
        return call_as_caller(original, (self, *args), kwargs)
    return marked(zero_grad, original)


_wrapped = WrappedAttributes(lambda: [(torch.optim.Optimizer, "zero_grad", _recording)])

# Record `optimizer.zero_grad()` calls into a recorder's `optimizer_clears` until
# `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
