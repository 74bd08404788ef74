"""Where `requires_grad` was set as a plain attribute on a module (`self.pooler.requires_grad =
False`).

A module's `requires_grad` is not a switch: `nn.Module` has a method `requires_grad_()` that
sets its parameters' flags, but assigning `module.requires_grad = False` only adds an attribute
and freezes nothing. While a doctor runs, `nn.Module.__setattr__` is wrapped to remember such an
assignment of a bool (the module weakly, the value, and the user's stack); every other attribute
goes straight through. analysis/module_flags.py compares the value with the module's parameters
before each optimizer step (AD216). Only weak references are kept.
"""

from __future__ import annotations

import collections
import functools
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Assignments remembered per recorder (models set such flags while they are built).
LOG_SIZE = 16


@dataclass
class ModuleFlag:
    """One `module.requires_grad = value`: the module (weakly), the value and where."""

    module_ref: weakref.ref
    value: bool
    stack: tuple[Site, ...]
    reported: bool = False  # on the flag itself: an id kept in a set is a later flag's once this one is evicted

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


class ModuleFlags:
    """The `requires_grad` attributes a recorder saw set on modules, newest last (each says
    whether it was reported)."""

    def __init__(self):
        self.flags: collections.deque = collections.deque(maxlen=LOG_SIZE)

    def remember(self, module, value: bool) -> None:
        self.flags.append(ModuleFlag(weakref.ref(module), value, capture_user_stack(1, limit=2)))


def _recording(original):
    @functools.wraps(original)
    def __setattr__(self, name, value):
        call_as_caller(original, (self, name, value), {})
        if name == "requires_grad" and isinstance(value, bool):
            try:
                for recorder in list(_wrapped.recorders):
                    recorder.module_flags.remember(self, value)
            except Exception:
                pass
    return marked(__setattr__, original)


_wrapped = WrappedAttributes(lambda: [(torch.nn.Module, "__setattr__", _recording)])

# Record `module.requires_grad = <bool>` into a recorder's `module_flags` until
# `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
