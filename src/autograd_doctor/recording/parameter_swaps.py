"""Where a module's parameter or submodule was replaced by another one (`self.scale =
nn.Parameter(...)`, `model.fc = nn.Linear(...)` on a module that already had one).

Two global registration hooks of torch.nn: they run when a module registers a parameter or a
submodule (mostly while models are built) and cost a dict look-up there; only a replacement
(the name already held a different object) is recorded. An optimizer built before the
replacement keeps the old tensors (analysis/stale_optimizer.py, AD207). Only weak references
and sites are kept: nothing here holds a tensor or a module alive.
"""

from __future__ import annotations

import sys
import weakref

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack, is_internal_file

# The most replacements remembered (the newest are kept).
MAX_SWAPS = 64


class Swap:
    """One replacement: the module, the attribute, the old tensors (the old parameter, or
    the old submodule's parameters), the new object, and where and how it happened."""

    __slots__ = ("module_ref", "name", "old_refs", "new_ref", "is_parameter", "stack", "grad_enabled",
                 "same_layout", "torch_name")

    def __init__(self, module, name: str, old_parameters: list, new, stack: tuple[Site, ...]):
        self.module_ref = weakref.ref(module)
        self.name = name
        self.old_refs = tuple(weakref.ref(p) for p in old_parameters)
        self.new_ref = weakref.ref(new)
        self.is_parameter = isinstance(new, torch.Tensor)
        self.stack = stack
        self.grad_enabled = torch.is_grad_enabled()
        # A parameter replaced by one of the same shape, dtype, device and requires_grad could
        # have had its value written into the old one instead (`old.copy_(new value)`).
        self.same_layout = False
        # The name the user's file has for the torch module (a help may need `torch.no_grad()`).
        self.torch_name: str | None = None

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None

    def old_parameters(self) -> list:
        return [p for p in (ref() for ref in self.old_refs) if p is not None]


def parameter_swap_hooks(swaps: list) -> tuple:
    """Register the hooks, which append to `swaps`; returns their handles (empty when this
    torch has no global registration hooks)."""
    module_module = torch.nn.modules.module
    register_parameter = getattr(module_module, "register_module_parameter_registration_hook", None)
    register_module = getattr(module_module, "register_module_module_registration_hook", None)
    if register_parameter is None or register_module is None:
        return ()

    def parameter_registered(module, name, parameter):
        try:
            old = module.__dict__["_parameters"].get(name)
            if old is not None and parameter is not None and old is not parameter:
                swap = Swap(module, name, [old], parameter, capture_user_stack(1, limit=3))
                swap.same_layout = (old.shape == parameter.shape and old.dtype == parameter.dtype
                                    and old.device == parameter.device
                                    and old.requires_grad == parameter.requires_grad)
                swap.torch_name = _torch_name()
                _remember(swaps, swap)
        except Exception:
            pass
        return None

    def module_registered(module, name, submodule):
        try:
            old = module.__dict__["_modules"].get(name)
            if old is not None and submodule is not None and old is not submodule:
                old_parameters = list(old.parameters())
                if old_parameters:
                    _remember(swaps, Swap(module, name, old_parameters, submodule, capture_user_stack(1, limit=3)))
        except Exception:
            pass
        return None

    return (register_parameter(parameter_registered), register_module(module_registered))


def _remember(swaps: list, swap: Swap) -> None:
    swaps.append(swap)
    del swaps[:-MAX_SWAPS]


def _torch_name() -> str | None:
    """The name bound to the torch module in the innermost user frame's globals."""
    frame = sys._getframe(2)
    while frame is not None and is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    if frame.f_globals.get("torch") is torch:
        return "torch"
    return next((name for name, value in frame.f_globals.items() if value is torch), None)
