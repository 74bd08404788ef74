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
import sys
import threading
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack, frame_locals, is_user_frame
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


@dataclass
class ModeCall:
    """One outermost `module.train(mode)` (`eval()` is `train(False)`): the module (weakly), the
    mode, the user's stack, the names bound to the module in the user's frames around the call
    (`(filename, line, name, code)`, innermost first), and its index among the calls."""

    module_ref: weakref.ref
    mode: bool
    stack: tuple[Site, ...]
    names: tuple
    index: int
    reported: bool = False


class ModuleFlags:
    """The `requires_grad` attributes a recorder saw set on modules, newest last (each says
    whether it was reported)."""

    def __init__(self):
        self.flags: collections.deque = collections.deque(maxlen=LOG_SIZE)
        # The outermost `module.train(mode)` / `module.eval()` calls (AD244), newest last, and
        # how many were made in all (a step remembers the count it saw).
        self.modes: collections.deque = collections.deque(maxlen=LOG_SIZE)
        self.mode_calls = 0

    def remember_mode(self, module, mode: bool, names: tuple) -> None:
        self.modes.append(ModeCall(weakref.ref(module), mode, capture_user_stack(2, limit=4), names,
                                   self.mode_calls))
        self.mode_calls += 1

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


_depth = threading.local()
# User frames looked at for a name bound to the module whose mode is set.
NAMED_FRAMES = 6


def _recording_train(original):
    @functools.wraps(original)
    def train(self, mode=True):
        depth = getattr(_depth, "value", 0)
        if depth:
            return original(self, mode)  # a child's, called by torch's train(): no frame to stand in for
        if not _wrapped.recorders or not isinstance(mode, bool):
            return call_as_caller(original, (self, mode), {})
        _depth.value = depth + 1  # the calls train() makes on the children are not the user's
        try:
            result = call_as_caller(original, (self, mode), {})
        finally:
            _depth.value = depth
        try:
            names = _names_of(self, sys._getframe(1))
            for recorder in list(_wrapped.recorders):
                recorder.module_flags.remember_mode(self, mode, names)
        except Exception:
            pass
        return result
    return marked(train, original)


def _names_of(module, frame) -> tuple:
    """(filename, line, name, code) for the user frames from `frame` outwards in which a name other
    than `self` is bound to `module` (locals, or a script's globals; else an attribute of a
    `self` that is not the module itself: `self.model`), innermost first."""
    found, looked = [], 0
    while frame is not None and looked < NAMED_FRAMES:
        if is_user_frame(frame):
            looked += 1
            values = frame_locals(frame)
            name = next((name for name, value in values.items() if value is module and name != "self"), None)
            owner = values.get("self")
            if name is None and owner is not None and owner is not module:
                # `self.model.eval()` in a trainer's method: the module is an attribute of `self`.
                attribute = next((key for key, value in getattr(owner, "__dict__", {}).items() if value is module),
                                 None)
                name = f"self.{attribute}" if attribute is not None else None
            if name is not None:
                found.append((frame.f_code.co_filename, frame.f_lineno, name, frame.f_code))
        frame = frame.f_back
    return tuple(found)


_wrapped = WrappedAttributes(lambda: [(torch.nn.Module, "__setattr__", _recording),
                                      (torch.nn.Module, "train", _recording_train)])

# Record `module.requires_grad = <bool>` into a recorder's `module_flags` until
# `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
