"""AD305's line to change when the output was computed from the input's values taken out of torch:
`pos = positions.detach().numpy()` in a descriptor function written with NumPy, whose result comes
back as `torch.from_numpy(...)`, a tensor without history. `torch.autograd.grad(energy, positions)`
then says only that positions "appears to not have been used in the graph".

Each link is checked: PyTorch's error (the output's graph does not reach the input), the data flow
(the statement that computes the output, or one it reads a name from, in the block of the grad()
call, reads the input or passes it to a function of the user's), and the conversion (in that
statement or in that function, a `.numpy()`, `.tolist()` or `.item()` chained on the input or on
the parameter it was passed as). The conversion is named only when there is exactly one. The help
is advice: the same computation in torch is the user's to write.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from autograd_doctor.analysis.errors.context import value_of
from autograd_doctor.analysis.source_scope import block_holding, stored_names
from autograd_doctor.diagnosis.source import function_definition, parse_file, segment
from autograd_doctor.recording.frames import in_installed_package

# Calls that give a tensor's values as NumPy or Python numbers, with no graph.
LEAVING_TORCH = ("numpy", "tolist", "item")
# Calls that may come between the tensor and the conversion (`x.detach().cpu().numpy()`).
ON_THE_WAY = ("detach", "cpu", "clone", "contiguous", "float", "double", "to", "squeeze", "flatten", "reshape",
              "view")


@dataclass
class RoundTrip:
    filename: str
    statement: ast.stmt  # the statement holding the conversion
    conversion: ast.Call  # `positions.detach().numpy()`
    name: str  # the name the input has there (the function's parameter, or the input's own name)
    function: str | None  # the user's function the input was passed to, if any


def input_left_torch(frame, filename: str, grad_statement: ast.stmt, output: ast.AST, input_name: str
                     ) -> RoundTrip | None:
    """The one place where the input `input_name`'s values left torch on the way to the output of
    the grad() call at `grad_statement` (`output`: its first argument); None when there is not
    exactly one."""
    tree = parse_file(filename)
    block = block_holding(tree, grad_statement) if tree is not None else None
    if block is None:
        return None
    wanted = {node.id for node in ast.walk(output) if isinstance(node, ast.Name)}
    found: list[RoundTrip] = []
    for statement in reversed(block[:block.index(grad_statement)]):
        targets = _assigned_names(statement)
        if input_name in targets:
            break  # the input is made here: nothing before it computes from it
        if not targets & wanted:
            continue
        wanted |= {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)
                   and isinstance(node.ctx, ast.Load)}
        found += _conversions(filename, statement, input_name, None)
        for call in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
            found += _conversions_in_called_function(frame, call, input_name)
    return found[0] if len(found) == 1 else None


def _assigned_names(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.Assign):
        return set().union(*(stored_names(target) for target in statement.targets))
    if isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        return stored_names(statement.target)
    return set()


def _conversions(filename: str, scope: ast.AST, name: str, function: str | None) -> list[RoundTrip]:
    """Every `<name>....numpy()` (or `.tolist()`, `.item()`) in `scope`, each with its statement."""
    found = []
    statements = [scope] if isinstance(scope, ast.stmt) and not hasattr(scope, "body") else [
        node for node in ast.walk(scope) if isinstance(node, ast.stmt) and not hasattr(node, "body")]
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in LEAVING_TORCH and _chain_root(node.func.value) == name:
                found.append(RoundTrip(filename, statement, node, name, function))
    return found


def _chain_root(node: ast.AST) -> str | None:
    """`x` for `x`, `x.detach()`, `x.data`, `x.detach().cpu()`; None for anything else."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ON_THE_WAY:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        else:
            return None


def _conversions_in_called_function(frame, call: ast.Call, name: str) -> list[RoundTrip]:
    """The conversions of the parameter that `call` (a call of a function of the user's files) passes
    `name` as, in that function's own body."""
    positions = [index for index, argument in enumerate(call.args) if isinstance(argument, ast.Name)
                 and argument.id == name]
    if len(positions) != 1 or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return []
    try:
        function = value_of(frame, call.func)
    except Exception:
        return []
    offset = 1 if inspect.ismethod(function) else 0
    function = inspect.unwrap(getattr(function, "__func__", function)) if callable(function) else None
    code = getattr(function, "__code__", None)
    if code is None or in_installed_package(code.co_filename):
        return []
    definition = function_definition(code)
    parameters = definition.args.args if definition is not None else []
    index = positions[0] + offset
    if index >= len(parameters):
        return []
    parameter = parameters[index].arg
    if any(parameter in _assigned_names(node) for node in ast.walk(definition) if isinstance(node, ast.stmt)):
        return []  # the parameter is rebound in the function: its later uses may be another value
    return _conversions(code.co_filename, definition, parameter, definition.name)


def describe(found: RoundTrip) -> str:
    return segment(found.filename, found.conversion) or ast.unparse(found.conversion)
