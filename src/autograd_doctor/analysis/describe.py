"""Describing the tensor a diagnosis is about: the name a statement writes or binds, read
from the user's source, and the report's `TensorInfo` made from a live tensor."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis.model import TensorInfo
from autograd_doctor.diagnosis.source import statement_at


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
            # `t.mul_(a).add_(b)`: each in-place method returns the tensor it wrote.
            while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr.endswith("_"):
                node = node.func.value
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


def plain_alias(filename: str, line: int, name: str | None):
    """(statement, other name) when `name` was last bound, in the same function before `line`,
    by a plain `name = other` (no call, no copy): `name` IS `other`, and a write into one
    is a write into the other. None otherwise."""
    from autograd_doctor.analysis.errors.context import last_assignment

    if not name or not name.isidentifier():
        return None
    statement = last_assignment(filename, name, line)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name) and target.id == name and isinstance(value, (ast.Name, ast.Attribute)):
        other = ast.unparse(value)
        return (statement, other) if other != name else None
    return None


def is_parameter_of_enclosing_function(filename: str, line: int, name: str) -> str | None:
    """The enclosing function's name when `name` is one of its parameters (a block's input)."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        if any(a.arg == name for a in arguments):
            return function.name
    return None
