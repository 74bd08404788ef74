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


def optimizers_in(frames: list[FrameType]) -> list[tuple[str, torch.optim.Optimizer]]:
    """(name, optimizer) for each optimizer a user frame refers to: a local or global
    variable, or an attribute of `self` (a trainer that holds its optimizer)."""
    seen: set[int] = set()
    found = []

    def visit(name: str, value) -> None:
        if isinstance(value, torch.optim.Optimizer) and id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))

    for frame in frames:
        local_values = frame_locals(frame)
        for scope in (local_values, frame.f_globals):
            for name, value in list(scope.items()):
                visit(name, value)
        owner = local_values.get("self")
        attributes = getattr(owner, "__dict__", None)
        if isinstance(attributes, dict):
            for name, value in list(attributes.items()):
                visit(f"self.{name}", value)
    return found


def optimized_tensors(frames: list[FrameType]) -> dict[int, str]:
    """Ids of the tensors that an optimizer in the user's frames updates, each with that
    optimizer's name."""
    trained: dict[int, str] = {}
    for name, optimizer in optimizers_in(frames):
        try:
            for group in optimizer.param_groups:
                for parameter in group.get("params", []):
                    trained.setdefault(id(parameter), name)
        except Exception:
            continue
    return trained


# Graph nodes visited at most when looking for the leaves a value comes from.
MAX_SOURCE_NODES = 20_000


def source_leaves(tensor) -> list[torch.Tensor]:
    """The leaves that require grad under `tensor`'s graph (the tensors whose gradient flows
    through it), each once; a bounded walk, so a huge graph ends early."""
    if not isinstance(tensor, torch.Tensor) or tensor.grad_fn is None:
        return []
    leaves: dict[int, torch.Tensor] = {}
    seen: set[int] = set()
    queue = [tensor.grad_fn]
    while queue and len(seen) < MAX_SOURCE_NODES:
        node = queue.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaves.setdefault(id(variable), variable)
        try:
            queue.extend(child for child, _ in node.next_functions if child is not None)
        except Exception:
            pass
    return list(leaves.values())
