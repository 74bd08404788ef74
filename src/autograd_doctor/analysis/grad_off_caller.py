"""AD301 when gradients were already off when the function that computes the loss and calls
backward() was entered: a caller turned them off. A host application that calls
`torch.set_grad_enabled(False)` before it runs the user's code, an optimizer whose `step(closure)`
is decorated with `@torch.no_grad()` and calls the closure inside, a framework hook run under
`no_grad`: nothing in the function itself cuts the path, and the caller's mode is meant for the
caller.

The function calls backward() on a loss it computes itself, so it means gradients to be on in
it: the help decorates it with `@torch.enable_grad()` (what PyTorch's own optimizers do around a
closure), which turns them on for its body and gives the caller its mode back when it returns.
Offered only where that is decidable from the run: backward() (or autograd.grad() without
create_graph, whose result is a plain value), gradients off (not inference mode, which
enable_grad does not lift) at the backward() call, the function's own code turning nothing off
(no grad-off decorator, `with` block or set_grad_enabled(False) call of its own), and the loss
assigned in its body, so its whole forward pass runs under the decorator.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import FrameType

import torch

from autograd_doctor.analysis.grad_off_blocks import grad_off_with_around
from autograd_doctor.analysis.source_scope import Scope, backward_call_node
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import call_name, parse_file, source_line, statement_location
from autograd_doctor.recording.frames import is_internal_file

GRAD_OFF_CALLS = {"no_grad", "inference_mode", "set_grad_enabled"}
# Callers looked at, from the function outwards, to name the one that turned gradients off.
MAX_CALLERS = 12


@dataclass
class OffAtEntry:
    """A function entered with gradients off, that computes a loss and calls backward() on it."""

    filename: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    loss_statement: ast.stmt  # the loss's assignment in the function
    torch_name: str  # the name the function's module imports torch as
    caller: Location | None = None  # the caller that turned gradients off, where it is the user's code


def off_at_entry(frame: FrameType | None, backward_line: int, names: list[str], switch=None) -> OffAtEntry | None:
    """The function of `frame` (the backward() call's) when gradients were off before it was
    entered and it computes the loss (`names`, read by the backward() statement) itself. `switch`:
    the `torch.set_grad_enabled(False)` call still in force, if any; it must be outside the
    function's own calls."""
    if frame is None or torch.is_grad_enabled() or torch.is_inference_mode_enabled():
        return None
    filename = frame.f_code.co_filename
    function = _definition(filename, frame)
    if function is None or _turns_grad_off(function):
        return None
    if grad_off_with_around(filename, backward_line) is not None:
        return None
    if switch is not None and _switch_inside(switch, frame):
        return None
    scope = Scope(filename, backward_line)
    if scope.node is not function or not _self_contained(scope.statement_at(backward_line)):
        return None
    loss = _loss_assignment(scope, names, backward_line)
    torch_name = _torch_name(frame)
    if loss is None or torch_name is None or grad_off_with_around(filename, loss.lineno) is not None:
        return None
    return OffAtEntry(filename, function, loss, torch_name, _grad_off_caller(frame.f_back))


def decorator_help(found: OffAtEntry) -> Suggestion:
    """`@torch.enable_grad()` over the function's first line (its first decorator, or the def)."""
    function = found.function
    first = function.decorator_list[0].lineno if function.decorator_list else function.lineno
    text = source_line(found.filename, first).strip()
    location = Location(found.filename, first, function.col_offset, end_line=first)
    return Suggestion(
        f"turn gradients on in {function.name}(), which computes the loss and calls backward(): "
        f"@{found.torch_name}.enable_grad() gives the caller its own mode back when {function.name}() returns",
        f"@{found.torch_name}.enable_grad()\n{text}", location)


def entry_note(found: OffAtEntry, loss_name: str) -> str:
    where = f" by its caller at line {found.caller.line}" if found.caller is not None else " by a caller"
    return (f"{found.function.name}() was entered with gradients already off{where}, and nothing in it turns them "
            f"on: {loss_name} was computed in it without grad history")


def _definition(filename: str, frame: FrameType) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def whose code the frame runs (the innermost def of that name around the frame's line)."""
    tree = parse_file(filename)
    best = None
    line = frame.f_lineno
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == frame.f_code.co_name \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _turns_grad_off(function: ast.AST) -> bool:
    """A grad-off decorator on the function, or a grad-off call in its own body (nested defs aside)."""
    for decorator in getattr(function, "decorator_list", []):
        if any(isinstance(node, ast.Call) and call_name(node) in GRAD_OFF_CALLS for node in ast.walk(decorator)):
            return True
        if isinstance(decorator, ast.Attribute) and decorator.attr in GRAD_OFF_CALLS:
            return True
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and call_name(node) in GRAD_OFF_CALLS:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _switch_inside(switch, frame: FrameType) -> bool:
    """Whether the set_grad_enabled(False) call ran inside this call of the function (in it or in
    a function it called), or cannot be placed: then turning gradients on at its entry is no help."""
    code = frame.f_code
    stack = [switch.site, *switch.callers]
    if any(site.code is code for site in stack):
        return True
    outer = set()
    caller = frame.f_back
    while caller is not None:
        outer.add(caller.f_code)
        caller = caller.f_back
    # The switch's own stack must reach a frame that is still running outside the function:
    # otherwise it was cut short and may run through the function.
    return not any(site.code in outer for site in stack)


def _self_contained(statement: ast.stmt | None) -> bool:
    """backward(), or autograd.grad() without create_graph: the gradients go to .grad or come back
    as plain values. With create_graph, the caller differentiates what the function returns, so
    its own grad-off mode is not the caller's to keep."""
    call = backward_call_node(statement) if statement is not None else None
    if call is None:
        return False
    if call_name(call) == "backward":
        return True
    return not any(k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                   for k in call.keywords) and len(call.args) < 5


def _loss_assignment(scope: Scope, names: list[str], line: int) -> ast.stmt | None:
    """The latest assignment, in the function, of a name the backward() statement reads, when it
    computes something (a call or an operator), not just renames a parameter."""
    for name in names:
        found = scope.latest_assignment(name, line)
        if found is not None and any(isinstance(node, (ast.Call, ast.BinOp)) for node in ast.walk(found[1])):
            return found[0]
    return None


def _torch_name(frame: FrameType) -> str | None:
    for name in ("torch", "th"):
        if frame.f_globals.get(name) is torch:
            return name
    return None


def _grad_off_caller(frame: FrameType | None) -> Location | None:
    """The innermost user caller that turned gradients off: a grad-off decorator on its function
    or a grad-off `with` around its line, or else the user's line that called into a library."""
    from_library = False
    for _ in range(MAX_CALLERS):
        if frame is None:
            return None
        filename = frame.f_code.co_filename
        if is_internal_file(filename):
            from_library = True
        else:
            definition = _definition(filename, frame)
            block = grad_off_with_around(filename, frame.f_lineno)
            if block is not None:
                location = statement_location(filename, block, role="called from",
                                              note="gradients are off in this block, which runs the function")
                location.end_line, location.end_column = location.line, None
                return location
            if definition is not None and _decorated_grad_off(definition):
                decorator = definition.decorator_list[0]
                return Location(filename, decorator.lineno, max(decorator.col_offset - 1, 0), role="called from",
                                note=f"{definition.name}() runs with gradients off and calls the function")
            if from_library:
                return Location(filename, frame.f_lineno, None, role="called from",
                                note="the function is called from here, through library code that turns "
                                     "gradients off")
        frame = frame.f_back
    return None


def _decorated_grad_off(function: ast.AST) -> bool:
    return any(any(isinstance(node, ast.Call) and call_name(node) in GRAD_OFF_CALLS for node in ast.walk(decorator))
               for decorator in getattr(function, "decorator_list", []))
