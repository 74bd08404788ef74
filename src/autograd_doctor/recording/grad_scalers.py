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
"""

from __future__ import annotations

import functools
import threading
import weakref

from autograd_doctor.recording.own_frames import call_as_caller


class GradScalerCalls:
    """Per optimizer (by id): the recorder's sequence number of its latest unscale_() by an
    enabled scaler, and that scaler (weakly)."""

    def __init__(self):
        self.last_unscale: dict[int, tuple[int, weakref.ref]] = {}

    def unscaled(self, scaler, optimizer, seq: int) -> None:
        if len(self.last_unscale) > 64 and id(optimizer) not in self.last_unscale:
            return  # a program making optimizers without end: keep the first ones
        self.last_unscale[id(optimizer)] = (seq, weakref.ref(scaler))

    def unscaled_at(self, optimizer) -> tuple[int, object] | None:
        """(sequence number, scaler) of the optimizer's latest unscale_(), or None."""
        found = self.last_unscale.get(id(optimizer))
        if found is None:
            return None
        scaler = found[1]()
        return (found[0], scaler) if scaler is not None else None


_lock = threading.Lock()
_recorders: list = []
_original = None


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
                for recorder in list(_recorders):
                    recorder.grad_scalers.unscaled(self, optimizer, next(recorder.seq))
        except Exception:
            pass
        return result
    unscale_._autograd_doctor_original = original
    return unscale_


def activate(recorder) -> None:
    """Record unscale_() calls into `recorder.grad_scalers` until `deactivate(recorder)`."""
    global _original
    with _lock:
        _recorders.append(recorder)
        scaler_class = _scaler_class()
        if len(_recorders) > 1 or scaler_class is None:
            return
        original = scaler_class.__dict__.get("unscale_")
        if original is None or hasattr(original, "_autograd_doctor_original"):
            return
        _original = original
        scaler_class.unscale_ = _recording(original)


def deactivate(recorder) -> None:
    global _original
    with _lock:
        if recorder in _recorders:
            _recorders.remove(recorder)
        if _recorders or _original is None:
            return
        scaler_class = _scaler_class()
        if scaler_class is not None and getattr(scaler_class.__dict__.get("unscale_"), "_autograd_doctor_original",
                                                None) is _original:
            scaler_class.unscale_ = _original
        _original = None
