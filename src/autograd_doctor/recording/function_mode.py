"""Thorough write capture (`watch(capture="mode")`) with a TorchFunctionMode."""

from __future__ import annotations

from typing import Any

from torch.overrides import TorchFunctionMode

from autograd_doctor.recording.calls import (
    _TENSOR_GETITEM, BACKWARD, MAKES_VIEW, NOT_WRITE, VIEW_METHODS, classify_call, op_name,
)
from autograd_doctor.recording.recorder import Recorder


class WriteWatcher(TorchFunctionMode):
    """Thorough capture (`watch(capture="mode")`): sees every user-level torch call, so it
    also catches `out=` writes; costs a Python call per torch call."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder
        self.kinds: dict[Any, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        try:
            kind = self.kinds[func]
        except KeyError:
            kind = self.kinds[func] = classify_call(func)
        except TypeError:
            kind = classify_call(func)
        if kind == NOT_WRITE and (func is _TENSOR_GETITEM or getattr(func, "__name__", None) in VIEW_METHODS):
            # Views by indexing (`buf[:]`) and by the methods the patches track in the full
            # mode (`buf.view(3)`): a superset of what the default capture sees.
            kind = MAKES_VIEW
            try:
                self.kinds[func] = kind
            except TypeError:
                pass
        if kind == NOT_WRITE and kwargs.get("out") is None and kwargs.get("inplace") is not True:
            if kwargs.get("requires_grad") is True:
                return self.recorder.call_factory(func, args, kwargs)
            return func(*args, **kwargs)
        if kind == BACKWARD:
            return self.recorder.call_backward(func, args, kwargs)
        if kind == MAKES_VIEW:
            return self.recorder.call_view(func, args, kwargs)
        return self.recorder.call_write(func, op_name(func, kwargs), kind, args, kwargs)
