"""Remember when an enabled GradScaler unscaled each optimizer's gradients (`scaler.unscale_(opt)`,
called by the user or by `scaler.step(opt)` itself).

Mixed precision's `scaler.scale(loss).backward()` leaves gradients multiplied by the loss scale
until `unscale_` divides them back. A clipping call between the two sees scaled gradients, and
nothing fails; the doctor compares, before each step(), where the last clipping call and the
last unscale_() of the optimizer fell in the recorder's sequence of events
(analysis/update_order.py).

`torch.amp.GradScaler.unscale_` is wrapped on the class while a doctor runs (its subclass
`torch.cuda.amp.GradScaler` inherits it); one call per optimizer step, nothing per tensor.
Only weak references are kept.

Each call is also kept, briefly, with the ids of the parameters whose gradients it divided and
the user's line that made it: an `unscale_()` given a wrapper of the optimizer (an object with
the optimizer's `param_groups`, as accelerate's `AcceleratedOptimizer`) divides the gradients but
is recorded under the wrapper, so `scaler.step(inner)` divides them a second time (AD248).
"""

from __future__ import annotations

import collections
import functools
import weakref
from dataclasses import dataclass

from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.identity import IdentityMap
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked


@dataclass
class UnscaleCall:
    """One unscale_() by an enabled scaler: when, of what (weakly, when it can be), which
    parameters' gradients it divided (ids only), and from which user lines."""

    seq: int
    target: object  # a weak reference to the object given to unscale_(), or None
    target_id: int
    target_class: str
    parameter_ids: frozenset
    scaler: weakref.ref
    stack: tuple[Site, ...]

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


class GradScalerCalls:
    """Per optimizer (by identity: a freed optimizer's id is soon a later one's): the recorder's
    sequence number of its latest unscale_() by an enabled scaler, and that scaler (weakly); and
    the last few unscale_() calls (AD248)."""

    def __init__(self):
        self.last_unscale = IdentityMap()  # optimizer -> (seq, weak reference to the scaler)
        self.calls: collections.deque = collections.deque(maxlen=8)

    def unscaled(self, scaler, optimizer, seq: int, stack: tuple = ()) -> None:
        self._remember_call(scaler, optimizer, seq, stack)
        if len(self.last_unscale) > 64 and optimizer not in self.last_unscale:
            return  # a program making optimizers without end: keep the first live ones
        self.last_unscale[optimizer] = (seq, weakref.ref(scaler))

    def _remember_call(self, scaler, optimizer, seq: int, stack: tuple) -> None:
        try:
            ids = frozenset(id(p) for group in optimizer.param_groups for p in group.get("params", ()))
        except Exception:
            return
        try:
            target = weakref.ref(optimizer)
        except TypeError:
            target = None
        self.calls.append(UnscaleCall(seq, target, id(optimizer), type(optimizer).__name__, ids,
                                      weakref.ref(scaler), tuple(stack)))

    def unscaled_at(self, optimizer) -> tuple[int, object] | None:
        """(sequence number, scaler) of the optimizer's latest unscale_(), or None."""
        found = self.last_unscale.get(optimizer)
        if found is None:
            return None
        scaler = found[1]()
        return (found[0], scaler) if scaler is not None else None


def _scaler_class():
    try:
        from torch.amp.grad_scaler import GradScaler
    except ImportError:
        return None
    return GradScaler


def _recording(original):
    @functools.wraps(original)
    def unscale_(self, optimizer):
        result = call_as_caller(original, (self, optimizer), {})
        try:
            if self.is_enabled():
                stack = capture_user_stack(1, limit=2)
                for recorder in list(_wrapped.recorders):
                    recorder.grad_scalers.unscaled(self, optimizer, next(recorder.seq), stack)
        except Exception:
            pass
        return result
    return marked(unscale_, original)


_wrapped = WrappedAttributes(lambda: [(scaler_class, "unscale_", _recording)
                                      for scaler_class in [_scaler_class()] if scaler_class is not None])

# Record `GradScaler.unscale_` calls into a recorder's `grad_scalers` until `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
