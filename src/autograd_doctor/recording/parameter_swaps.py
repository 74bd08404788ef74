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
                 "same_layout", "torch_name", "mode_call")

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
        # A submodule replaced by one of the same class and layout (the same submodules, settings,
        # state-dict keys, shapes, dtypes, devices and requires_grad): its values could have been
        # loaded into the old one instead (`old.load_state_dict(new.state_dict())`). Then the call
        # that puts the old one in the new one's mode afterwards ("" when the modes already match,
        # "train" or "eval"); None when no such copy reproduces the new submodule.
        self.mode_call: str | None = None

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
                    swap = Swap(module, name, old_parameters, submodule, capture_user_stack(1, limit=3))
                    swap.mode_call = loadable_mode_call(old, submodule)
                    _remember(swaps, swap)
        except Exception:
            pass
        return None

    return (register_parameter(parameter_registered), register_module(module_registered))


# Attribute values compared by equality when two submodules' settings are compared (others by identity).
_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def loadable_mode_call(old, new) -> str | None:
    """Whether loading `new`'s state dict into `old` reproduces `new` (Swap.mode_call): the same
    module tree (names and classes), the same settings (public attributes: equal plain values, the
    very same other objects), every buffer persistent, and the same state-dict keys with the same
    shape, dtype, device and requires_grad. Returns the mode call the copy needs afterwards, or
    None. Runs only when a submodule is replaced."""
    try:
        old_modules, new_modules = list(old.named_modules()), list(new.named_modules())
        if [n for n, _ in old_modules] != [n for n, _ in new_modules]:
            return None
        for (_, a), (_, b) in zip(old_modules, new_modules):
            if type(a) is not type(b) or not _same_settings(a, b):
                return None
        old_state, new_state = old.state_dict(keep_vars=True), new.state_dict(keep_vars=True)
        if list(old_state) != list(new_state) or any(n not in new_state for n, _ in new.named_buffers()):
            return None
        for key, value in old_state.items():
            other = new_state[key]
            if not (isinstance(value, torch.Tensor) and isinstance(other, torch.Tensor)
                    and value.shape == other.shape and value.dtype == other.dtype
                    and value.device == other.device and value.requires_grad == other.requires_grad):
                return None
        new_modes = {m.training for _, m in new_modules}
        if all(a.training == b.training for (_, a), (_, b) in zip(old_modules, new_modules)):
            return ""
        if len(new_modes) != 1:
            return None
        return "train" if new_modes.pop() else "eval"
    except Exception:
        return None


def _same_settings(a, b) -> bool:
    first = {k: v for k, v in vars(a).items() if not k.startswith("_") and k != "training"}
    second = {k: v for k, v in vars(b).items() if not k.startswith("_") and k != "training"}
    if first.keys() != second.keys():
        return False
    for key, value in first.items():
        other = second[key]
        if isinstance(value, _PLAIN) or isinstance(value, tuple) and all(isinstance(v, _PLAIN) for v in value):
            if type(value) is not type(other) or value != other:
                return False
        elif value is not other:
            return False
    return True


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
