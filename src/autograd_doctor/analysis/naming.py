"""Naming tensors as the user knows them, from live objects: variable names in the user's
frames and parameter paths in their modules. (Names read from source text, and the
report's `TensorInfo`, are in `analysis.describe`: this module imports nothing of `report`.)"""

from __future__ import annotations

import sys
from types import FrameType

import torch

from autograd_doctor.recording.events import storage_key
from autograd_doctor.recording.frames import frame_locals, is_user_frame


def user_frames(limit: int = 20) -> list[FrameType]:
    frames = []
    frame = sys._getframe(1)
    while frame is not None and len(frames) < limit:
        if is_user_frame(frame):
            frames.append(frame)
        frame = frame.f_back
    return frames


def modules_in(frames: list[FrameType]) -> list[tuple[str, torch.nn.Module]]:
    seen: set[int] = set()
    found = []
    for frame in frames:
        for scope in (frame_locals(frame), frame.f_globals):
            for name, value in list(scope.items()):
                if isinstance(value, torch.nn.Module) and id(value) not in seen:
                    seen.add(id(value))
                    found.append(("" if name == "self" else name, value))
    return found


def parameter_path(tensor, frames: list[FrameType]) -> str | None:
    """`D.2.weight` for a parameter of a module that a user frame refers to."""
    if tensor is None:
        return None
    key = storage_key(tensor)
    for module_name, module in modules_in(frames):
        try:
            for name, parameter in module.named_parameters():
                if parameter is tensor or (key is not None and storage_key(parameter) == key
                                           and parameter.shape == tensor.shape):
                    return f"{module_name}.{name}" if module_name else name
        except Exception:
            continue
    return None


def module_path(module, frames: list[FrameType]) -> str | None:
    for module_name, candidate in modules_in(frames):
        if candidate is module:
            return module_name or type(module).__name__
        try:
            for name, child in candidate.named_modules():
                if child is module and name:
                    return f"{module_name}.{name}" if module_name else name
        except Exception:
            continue
    return None


def variable_for(tensor, frames: list[FrameType]) -> str | None:
    """A local name in a user frame that refers to this exact tensor object."""
    if tensor is None:
        return None
    for frame in frames:
        for name, value in frame_locals(frame).items():
            if value is tensor and not name.startswith("_"):
                return name
    return None


def same_memory(a, b) -> bool:
    """The same elements of the same storage (shape, strides and offset equal)."""
    try:
        return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.shape == b.shape
                and a.stride() == b.stride() and a.storage_offset() == b.storage_offset())
    except Exception:
        return False


def variable_with_memory_of(tensor, frames: list[FrameType], only: str | None = None) -> str | None:
    """A local name in a user frame whose tensor is `tensor` or shares its exact memory
    (the saved copy autograd keeps is an alias, not the user's object). With `only`,
    whether that one name does."""
    if tensor is None:
        return None
    for frame in frames:
        for name, value in frame_locals(frame).items():
            if only is not None and name != only:
                continue
            if isinstance(value, torch.Tensor) and not name.startswith("_") and (
                    value is tensor or same_memory(value, tensor)):
                return name
    return None
