"""A write into a tensor that a function keeps as its own, while it *is* its caller's.

`self.tensor = torch.as_tensor(tensor)` (or `boxes = tensor.to(device)`, `out = x`) does not copy
when the argument is already a tensor of that dtype and device: the name it binds is the caller's
tensor. A later in-place write through that name (`self.tensor[:, :3] += ...`) changes the
caller's tensor, which autograd may have saved (AD101). The line to change is the binding: a
`.clone()` there gives the function its own copy, and the caller's tensor keeps its values.

Only plain names, attribute chains of one name (`self.tensor`) and the calls that return their
argument itself (`torch.as_tensor`, `torch.asarray`, `.to(...)`, `.type_as(...)`) are followed, back
through the function's own assignments to one of its parameters (4 steps at most). Anything else:
None.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.diagnosis.source import parse_file

MAX_STEPS = 4
# torch functions that return their argument itself when no copy is needed.
RETURNING_ARGUMENT = {"as_tensor", "asarray"}
# Tensor methods that return the tensor itself when nothing changes.
RETURNING_SELF = {"to", "type_as"}


def _passed_through(value: ast.AST) -> str | None:
    """The name `value` is, or returns itself (`x`, `torch.as_tensor(x, ...)`, `x.to(device)`)."""
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        receiver = value.func.value
        if value.func.attr in RETURNING_ARGUMENT and isinstance(receiver, ast.Name) \
                and receiver.id in {"torch", "th"} and value.args and isinstance(value.args[0], ast.Name):
            return value.args[0].id
        if value.func.attr in RETURNING_SELF and isinstance(receiver, ast.Name):
            return receiver.id
    return None


def _last_binding(function: ast.AST, target: str, before: int) -> ast.Assign | None:
    best = None
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.lineno < before \
                and ast.unparse(node.targets[0]) == target and (best is None or node.lineno > best.lineno):
            best = node
    return best


def caller_alias(filename: str, line: int, written: str | None):
    """(the statement that binds `written`'s root, the parameter it is, the function's def) when
    the tensor written at `line` is, through plain bindings and calls that return their argument,
    one of the enclosing function's parameters; None otherwise."""
    root = written.split("[")[0].strip() if written else None
    if not root or not all(part.isidentifier() for part in root.split(".")):
        return None
    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    binding = _last_binding(function, root, line)
    if binding is None and root.startswith("self."):
        # An attribute the object bound in another method (`__init__`), the only binding in its class.
        owner = next((node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and function in node.body), None)
        bindings = [(method, node) for method in (owner.body if owner is not None else [])
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for node in ast.walk(method) if isinstance(node, ast.Assign) and len(node.targets) == 1
                    and ast.unparse(node.targets[0]) == root]
        if len(bindings) != 1:
            return None
        function, binding = bindings[0]
    if binding is None:
        return None
    parameters = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    name, statement = _passed_through(binding.value), binding
    for _ in range(MAX_STEPS):
        if name is None or name == root:
            return None
        earlier = _last_binding(function, name, statement.lineno)
        if earlier is None:
            return (binding, name, function) if name in parameters and name != "self" else None
        name, statement = _passed_through(earlier.value), earlier
    return None
