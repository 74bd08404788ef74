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

When the caller that turned gradients off is the user's own function decorated with a grad-off
decorator, and its statement calls one of its own parameters (`loss = closure()` in `@torch.no_grad()
def step(self, closure)`), that call is the line to change (CallbackCall): every callable given
there computes a loss and backpropagates, and the help puts the call in `with torch.enable_grad():`
(as torch.optim's L-BFGS evaluates its closure); the decorator on the callable is the second help.
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
from autograd_doctor.recording.frames import frame_locals, is_internal_file

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
    callback: CallbackCall | None = None  # that caller's call of the function, when it was given the function


@dataclass
class CallbackCall:
    """`loss = closure()` in the user's `@torch.no_grad()` function `step(self, closure)`: the grad-off
    function calls a callable it was given (an optimizer's closure, a hook). The callable computes
    a loss and backpropagates, which needs gradients on, and every callable given there does: the
    line to change is the call, evaluated under enable_grad (what torch.optim's L-BFGS does)."""

    filename: str
    statement: ast.stmt  # the simple statement holding the call
    function_name: str  # the grad-off function's name (`step`)
    parameter: str  # the parameter called (`closure`)
    torch_name: str  # the name the caller's module imports torch as


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
    caller = _grad_off_caller(frame.f_back)
    callback = _callback_call(frame.f_back, caller)
    return OffAtEntry(filename, function, loss, torch_name, caller, callback)


SIMPLE_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)


def _callback_call(frame: FrameType | None, caller: Location | None) -> CallbackCall | None:
    """The grad-off decorated caller's statement that called the function, when that call is of one
    of the caller's own parameters (`closure()` in `step(self, closure)`) and the statement is a
    simple one (an assignment, an expression, a return) that can be put in a `with` block."""
    if caller is None:
        return None
    for _ in range(MAX_CALLERS):
        if frame is None:
            return None
        if frame.f_code.co_filename == caller.file and not is_internal_file(frame.f_code.co_filename):
            definition = _definition(caller.file, frame)
            if definition is not None and _decorated_grad_off(definition) and \
                    definition.decorator_list[0].lineno == caller.line:
                break
        frame = frame.f_back
    else:
        return None
    parameters = {argument.arg for argument in definition.args.args + definition.args.kwonlyargs}
    statement = next((node for node in ast.walk(definition) if isinstance(node, SIMPLE_STATEMENTS)
                      and node.lineno <= frame.f_lineno <= (node.end_lineno or node.lineno)), None)
    if statement is None:
        return None
    called = [node.func.id for node in ast.walk(statement) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id in parameters]
    torch_name = _torch_name(frame)
    if len(called) != 1 or torch_name is None:
        return None
    return CallbackCall(caller.file, statement, definition.name, called[0], torch_name)


def callback_call_help(call: CallbackCall) -> Suggestion:
    """The statement that calls the callable, inside `with torch.enable_grad():`."""
    statement = call.statement
    lines = [source_line(call.filename, line) for line in range(statement.lineno, statement.end_lineno + 1)]
    lines[-1] = lines[-1][:statement.end_col_offset]  # without a trailing comment
    indent = len(lines[0]) - len(lines[0].lstrip())
    body = [line[indent:].rstrip() for line in lines]
    text = "\n".join([f"with {call.torch_name}.enable_grad():", *("    " + line if line else line for line in body)])
    location = Location(call.filename, statement.lineno, statement.col_offset, end_line=statement.end_lineno)
    return Suggestion(f"evaluate {call.parameter}() with gradients on: {call.function_name}() turns them off for its "
                      f"own updates, and the {call.parameter} it is given computes a loss and calls backward(); the "
                      f"rest of {call.function_name}() keeps gradients off", text, location)


def callback_call_location(call: CallbackCall) -> Location:
    return statement_location(call.filename, call.statement, role="called from",
                              note=f"{call.function_name}() calls {call.parameter}(), the function it was given, "
                                   "with gradients off")


@dataclass
class DerivativeOffAtEntry:
    """A function that differentiates, with autograd.grad(..., create_graph=True), an output it
    computes from its own argument (an ODE right-hand side, a force field) and that runs inside the
    user's torch.autograd.Function forward(), where PyTorch turns gradients off (an adjoint
    solver): its result goes back to the caller, so the function itself is not decorated; the
    statements from the output to the derivative are wrapped instead. (Under a user's own no_grad
    block, that block is the line to change, as for any cut.)"""

    filename: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    statements: list[ast.stmt]  # from the output's assignment to the autograd.grad statement
    inputs: list[str]  # the differentiated arguments that do not require grad when the function runs
    torch_name: str
    caller: Location | None = None


def derivative_off_at_entry(frame: FrameType | None, grad_line: int, names: list[str]) -> DerivativeOffAtEntry | None:
    """The function of `frame` when gradients were off before it was entered, its statement at
    `grad_line` is `torch.autograd.grad(output, inputs, ..., create_graph=True)`, and `output` is
    assigned earlier in the same block of the function."""
    if frame is None or torch.is_grad_enabled() or torch.is_inference_mode_enabled():
        return None
    filename = frame.f_code.co_filename
    function = _definition(filename, frame)
    if function is None or _turns_grad_off(function) or grad_off_with_around(filename, grad_line) is not None:
        return None
    scope = Scope(filename, grad_line)
    statement = scope.statement_at(grad_line)
    call = backward_call_node(statement) if statement is not None else None
    if scope.node is not function or call is None or call_name(call) != "grad" or len(call.args) < 2:
        return None
    output = _loss_assignment(scope, names, grad_line)
    torch_name = _torch_name(frame)
    block = next((body for body in _bodies(function) if output in body and statement in body), None)
    if output is None or torch_name is None or block is None or block.index(output) > block.index(statement):
        return None
    arguments = {argument.arg for argument in function.args.args}
    inputs = [node.id for node in ast.walk(call.args[1]) if isinstance(node, ast.Name) and node.id in arguments
              and isinstance(value := frame_locals(frame).get(node.id), torch.Tensor) and not value.requires_grad]
    caller = _function_forward_caller(frame.f_back)
    if caller is None:
        return None  # a caller's own no_grad block or decorator: that block is the line to change
    statements = block[block.index(output):block.index(statement) + 1]
    return DerivativeOffAtEntry(filename, function, statements, inputs, torch_name, caller)


def _function_forward_caller(frame: FrameType | None) -> Location | None:
    """The user's torch.autograd.Function forward() the call runs inside (PyTorch runs it with
    gradients off), named at its def line."""
    for _ in range(MAX_CALLERS):
        if frame is None:
            return None
        context = frame_locals(frame).get("ctx") if frame.f_code.co_name == "forward" else None
        if isinstance(context, torch.autograd.function.FunctionCtx) and not is_internal_file(frame.f_code.co_filename):
            definition = _definition(frame.f_code.co_filename, frame)
            if definition is not None:
                return Location(frame.f_code.co_filename, definition.lineno, definition.col_offset, role="called from",
                                note="an autograd.Function's forward(): PyTorch runs it with gradients off")
        frame = frame.f_back
    return None


def enable_grad_block_help(found: DerivativeOffAtEntry) -> Suggestion:
    """`with torch.enable_grad():` around the statements from the output to the derivative, with
    each differentiated argument that does not require grad cloned into a leaf that does."""
    first, last = found.statements[0], found.statements[-1]
    lines = [source_line(found.filename, line) for line in range(first.lineno, last.end_lineno + 1)]
    indent = len(lines[0]) - len(lines[0].lstrip())
    body = [f"{name} = {name}.clone().requires_grad_(True)" for name in found.inputs]
    body += [line[indent:].rstrip() for line in lines]
    text = "\n".join([f"with {found.torch_name}.enable_grad():", *("    " + line if line else line for line in body)])
    location = Location(found.filename, first.lineno, first.col_offset, end_line=last.end_lineno)
    asked = (f"; {', '.join(found.inputs)} then {'requires' if len(found.inputs) == 1 else 'require'} grad, a copy "
             "the output is computed from" if found.inputs else "")
    return Suggestion(f"turn gradients on for the derivative that {found.function.name}() takes itself{asked}; "
                      "the caller keeps its own mode outside the block", text, location)


def derivative_entry_note(found: DerivativeOffAtEntry) -> str:
    where = f" (line {found.caller.line})" if found.caller is not None else ""
    return (f"{found.function.name}() runs inside an autograd.Function's forward(){where}, where PyTorch turns "
            f"gradients off, and the derivative it takes needs them on")


def _bodies(function: ast.AST):
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


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
