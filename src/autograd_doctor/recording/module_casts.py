"""Where a module's parameters were cast to float16 or bfloat16 (`module.to(dtype=...)`,
`module.half()`, `module.bfloat16()`).

GradScaler refuses float16 gradients (AD151); when the trained parameters were cast by a call
in another function (a validation pipeline moved with `pipeline.to(device, dtype=torch.float16)`
around the live model), the failing line does not show it. While a doctor runs, those three
methods of `nn.Module` are wrapped: a call that asks for a half-precision dtype notes, after it
ran, which parameters changed dtype (weakly) with the user's stack. A `.to()` without a dtype,
the most common call, goes straight through after one argument check. Kept process-wide (the
diagnosis is made after the doctor stopped), bounded, and only weak references.
"""

from __future__ import annotations

import collections
import functools
import threading
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

LOG_SIZE = 16
HALF_DTYPES = (torch.float16, torch.bfloat16)


@dataclass
class ModuleCast:
    """One cast of a module's parameters to a half-precision dtype: the dtype, the parameters whose
    dtype it changed (weakly) and the user's stack, innermost first."""

    dtype: torch.dtype
    parameters: tuple[weakref.ref, ...]
    stack: tuple[Site, ...]

    def holds(self, parameter_ids: set) -> bool:
        return any(id(p) in parameter_ids for p in (ref() for ref in self.parameters) if p is not None)


casts: collections.deque = collections.deque(maxlen=LOG_SIZE)
_depth = threading.local()


def last_cast_of(parameter_ids: set) -> ModuleCast | None:
    """The most recent recorded cast that changed one of the parameters (by id, alive)."""
    return next((cast for cast in reversed(casts) if cast.holds(parameter_ids)), None)


def _asked_dtype(name: str, args: tuple, kwargs: dict):
    if name == "half":
        return torch.float16
    if name == "bfloat16":
        return torch.bfloat16
    try:
        return torch._C._nn._parse_to(*args, **kwargs)[1]
    except Exception:
        return None


def _recording(name: str):
    def make(original):
        @functools.wraps(original)
        def wrapper(self, *args, **kwargs):
            dtype = _asked_dtype(name, args, kwargs) if _wrapped.recorders else None
            if dtype not in HALF_DTYPES or getattr(_depth, "value", 0):
                return call_as_caller(original, (self, *args), kwargs)
            try:
                before = [(p, p.dtype) for p in self.parameters()]
                stack = capture_user_stack(1, limit=4)
            except Exception:
                return call_as_caller(original, (self, *args), kwargs)
            _depth.value = 1  # a subclass's .to() calling super().to(): one cast
            try:
                result = call_as_caller(original, (self, *args), kwargs)
            finally:
                _depth.value = 0
            try:
                changed = tuple(weakref.ref(p) for p, was in before if p.dtype != was)
                if changed:
                    casts.append(ModuleCast(dtype, changed, stack))
            except Exception:
                pass
            return result
        return marked(wrapper, original)
    return make


_wrapped = WrappedAttributes(lambda: [(torch.nn.Module, name, _recording(name)) for name in ("to", "half", "bfloat16")])

activate, deactivate = _wrapped.activate, _wrapped.deactivate
