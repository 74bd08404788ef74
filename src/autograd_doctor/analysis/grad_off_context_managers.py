"""A loss computed inside `with helper(...):` where `helper` is the user's own
`contextlib.contextmanager` that turns gradients off around its `yield` (a context manager that
freezes BatchNorm by eval() and also opens `torch.no_grad()`), or the user's class whose `__enter__`
calls `torch.set_grad_enabled(False)` (a timer that keeps autograd out of what it times): nothing in
the `with` block of the caller is recorded, though the caller's code shows no grad-off block. The
line to change is the helper's block around the `yield`, or the class's call in `__enter__`."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import display_path, function_definition, parse_file, source_line
from autograd_doctor.recording.frames import in_installed_package, is_internal_file


@dataclass
class GradOffContextManager:
    caller: ast.With  # the user's `with helper(...):` around the loss
    filename: str  # the helper's file
    block: ast.With  # the helper's grad-off block around its yield
    function: str  # the helper's name


def grad_off_context_manager(filename: str, line: int, frame_locals: dict | None) -> GradOffContextManager | None:
    """The user's context manager whose grad-off block holds its `yield`, entered by a `with`
    statement of `filename` around `line`; None when there is none."""
    tree = parse_file(filename)
    if tree is None or frame_locals is None:
        return None
    for with_statement, name in _with_calls_around(tree, line):
        code = getattr(inspect.unwrap(frame_locals[name]), "__code__", None) \
            if name in frame_locals and callable(frame_locals[name]) else None
        if code is None or not code.co_flags & inspect.CO_GENERATOR or is_internal_file(code.co_filename) \
                or in_installed_package(code.co_filename):
            continue
        definition = function_definition(code)
        for block in ast.walk(definition) if definition is not None else ():
            if isinstance(block, ast.With) and any(_turns_gradients_off(i.context_expr) for i in block.items) \
                    and any(isinstance(n, ast.Yield) for s in block.body for n in ast.walk(s)):
                return GradOffContextManager(with_statement, code.co_filename, block, definition.name)
    return None


def _with_calls_around(tree: ast.AST, line: int):
    """(with statement, called name) for each `with name(...):` item whose body holds `line`,
    innermost statement first; the name is None where the item calls no plain name."""
    enclosing = [node for node in ast.walk(tree) if isinstance(node, ast.With) and node.body
                 and node.body[0].lineno <= line <= node.end_lineno]
    for with_statement in sorted(enclosing, key=lambda node: -node.lineno):
        for item in with_statement.items:
            call = item.context_expr
            yield with_statement, (call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                                   else None)


def _turns_gradients_off(node: ast.AST) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`."""
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "attr", getattr(node.func, "id", None))
    if name in ("no_grad", "inference_mode"):
        return not node.args or isinstance(node.args[0], ast.Constant) and node.args[0].value is not False
    return name == "set_grad_enabled" and len(node.args) == 1 and \
        isinstance(node.args[0], ast.Constant) and node.args[0].value is False


def block_dropped(found: GradOffContextManager, message: str) -> Suggestion | None:
    """The helper's grad-off block replaced by its body (one level less indented): the helper still
    does everything else it does, with gradients as its caller has them. None when the block has
    more than one context manager or its lines are not indented as expected."""
    block = found.block
    if len(block.items) != 1:
        return None
    first = source_line(found.filename, block.lineno)
    indent = first[: len(first) - len(first.lstrip())]
    body_first = source_line(found.filename, block.body[0].lineno)
    body_indent = body_first[: len(body_first) - len(body_first.lstrip())]
    if not body_indent.startswith(indent) or body_indent == indent:
        return None
    lines = [source_line(found.filename, number).rstrip() for number in range(block.body[0].lineno, block.end_lineno + 1)]
    if not all(text.startswith(body_indent) or not text.strip() for text in lines):
        return None
    replacement = "\n".join(text[len(body_indent):] for text in lines)
    last = source_line(found.filename, block.end_lineno).rstrip()
    location = Location(file=display_path(found.filename), line=block.lineno, column=len(indent),
                        end_line=block.end_lineno, end_column=len(last), source=first.strip())
    return Suggestion(message, replacement, location)


@dataclass
class GradOffEnter:
    caller: ast.With  # the user's `with Timer():` around the loss
    filename: str  # the class's file
    switch: ast.stmt  # `torch.set_grad_enabled(False)` in its __enter__
    class_name: str


def grad_off_enter(filename: str, line: int, frame_locals: dict | None) -> GradOffEnter | None:
    """The user's context-manager class whose `__enter__` called `torch.set_grad_enabled(False)`
    (recorded at run time) for a `with` statement of `filename` around `line`: nothing in that
    block is recorded, though neither the block nor the class's name says so. None when there is
    none."""
    from autograd_doctor.recording import switches

    tree = parse_file(filename)
    if tree is None or frame_locals is None:
        return None
    disabled = {(switch.site.filename, switch.site.lineno) for switch in switches.grad_switches()
                if not switch.enabled and switch.site is not None and switch.site.function == "__enter__"}
    if not disabled:
        return None
    for with_statement, name in _with_calls_around(tree, line):
        cls = frame_locals.get(name) if name else None
        enter = getattr(cls, "__enter__", None) if isinstance(cls, type) else None
        code = getattr(enter, "__code__", None)
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            continue
        definition = function_definition(code)
        for statement in ast.walk(definition) if definition is not None else ():
            if isinstance(statement, ast.Expr) and _turns_gradients_off(statement.value) \
                    and (code.co_filename, statement.lineno) in disabled:
                return GradOffEnter(with_statement, code.co_filename, statement, cls.__name__)
    return None


def switch_deleted(found: GradOffEnter, message: str) -> Suggestion | None:
    """The `torch.set_grad_enabled(False)` statement deleted: a Suggestion's replacement cannot be
    empty, so the change spans it and the next statement of the same body, and keeps the second.
    None when it is the last statement of its body or the next one spans several lines."""
    tree = parse_file(found.filename)
    for node in ast.walk(tree) if tree is not None else ():
        body = getattr(node, "body", None)
        if not isinstance(body, list) or found.switch not in body:
            continue
        index = body.index(found.switch)
        if index + 1 >= len(body) or body[index + 1].lineno != body[index + 1].end_lineno \
                or body[index + 1].lineno != found.switch.end_lineno + 1:
            return None
        kept = source_line(found.filename, body[index + 1].lineno).rstrip()
        first = source_line(found.filename, found.switch.lineno)
        indent = first[: len(first) - len(first.lstrip())]
        location = Location(file=display_path(found.filename), line=found.switch.lineno, column=len(indent),
                            end_line=body[index + 1].lineno, end_column=len(kept), source=first.strip())
        return Suggestion(message, kept[len(indent):], location)
    return None
