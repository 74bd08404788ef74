"""Describing the tensor a diagnosis is about: the name a statement writes or binds, read
from the user's source, and the report's `TensorInfo` made from a live tensor."""

from __future__ import annotations

import ast

from autograd_doctor.report.model import TensorInfo
from autograd_doctor.report.source import statement_at


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
