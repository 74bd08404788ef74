"""Thorough write capture (`watch(capture="mode")`) with a TorchFunctionMode."""

from __future__ import annotations

from typing import Any

from torch.overrides import TorchFunctionMode

from autograd_doctor.recording.calls import (
    _TENSOR_GETITEM, BACKWARD, MAKES_VIEW, NOT_WRITE, VIEW_METHODS, classify_call, op_name,
)
from autograd_doctor.recording.own_frames import call_as_caller, hide_our_frames
from autograd_doctor.recording.recorder import Recorder


class WriteWatcher(TorchFunctionMode):
    """Thorough capture (`watch(capture="mode")`): sees every user-level torch call, so it
    also catches `out=` writes; costs a Python call per torch call."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder
        self.kinds: dict[Any, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        # Runs for every torch call: one dictionary look-up decides what the call is, and
        # the dispatch is inlined here (no further frame of ours before torch's).
        try:
            if kwargs is None:
                kwargs = {}
            try:
                kind = self.kinds[func]
            except KeyError:
                kind = self.kinds[func] = _kind_of(func)
            except TypeError:
                kind = _kind_of(func)
            if kind == NOT_WRITE and kwargs.get("out") is None and kwargs.get("inplace") is not True:
                if kwargs.get("requires_grad") is True:
                    return self.recorder.call_factory(func, args, kwargs)
                return call_as_caller(func, args, kwargs)
            if kind == BACKWARD:
                return self.recorder.call_backward(func, args, kwargs)
            if kind == MAKES_VIEW:
                return self.recorder.call_view(func, args, kwargs)
            return self.recorder.call_write(func, op_name(func, kwargs), kind, args, kwargs)
        except BaseException as error:
            hide_our_frames(error)  # the traceback goes from the user's line to torch's
            raise


def _kind_of(func) -> int:
    """What a torch call does, for the mode: `classify_call`'s kind, except that views by
    indexing (`buf[:]`) and by the methods the patches track in the full mode
    (`buf.view(3)`) make views: a superset of what the default capture sees."""
    kind = classify_call(func)
    if kind == NOT_WRITE and (func is _TENSOR_GETITEM or getattr(func, "__name__", None) in VIEW_METHODS):
        return MAKES_VIEW
    return kind
