"""Naming tensors as the user knows them: variable names and parameter paths."""

from __future__ import annotations

import ast
import sys
from types import FrameType

import torch

from autograd_doctor.recording.events import storage_key
from autograd_doctor.recording.frames import frame_locals, is_user_frame
from autograd_doctor.report.model import TensorInfo
from autograd_doctor.report.source import statement_at


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


def written_name(filename: str, line: int) -> str | None:
    """The expression a statement writes into: `b` in `b[1] = 2`, `h` in `h.mul_(s)`."""
    statement = statement_at(filename, line)
    if statement is None:
        return None
    node: ast.AST | None = None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        node = statement.targets[0]
        while isinstance(node, ast.Subscript):
            node = node.value
    elif isinstance(statement, ast.AugAssign):
        node = statement.target
        while isinstance(node, ast.Subscript):
            node = node.value
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if isinstance(call.func, ast.Attribute) and call.func.attr.endswith("_"):
            node = call.func.value
        elif call.args:
            node = call.args[0]
    if isinstance(node, (ast.Name, ast.Attribute)):
        try:
            return ast.unparse(node)
        except Exception:
            return None
    return None


def assigned_name(filename: str, line: int) -> str | None:
    """`h` in `h = torch.tanh(...)`: the name bound at the save site."""
    statement = statement_at(filename, line)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, (ast.Name, ast.Attribute)):
            return ast.unparse(target)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and isinstance(statement.target, (ast.Name, ast.Attribute)):
        return ast.unparse(statement.target)
    return None


def tensor_info(tensor, name: str | None, parameter: str | None = None,
                version_saved: int | None = None, version_found: int | None = None) -> TensorInfo:
    dtype = str(tensor.dtype).replace("torch.", "")
    return TensorInfo(
        name=name, shape=list(tensor.shape), dtype=dtype, device=str(tensor.device),
        version_saved=version_saved, version_found=version_found, parameter=parameter,
    )
