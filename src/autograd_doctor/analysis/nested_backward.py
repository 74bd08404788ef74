"""A backward() (or autograd.grad) called inside a hook that autograd runs during another
backward(): "element 0 of tensors does not require grad" (pytorch#90520, set 36).

Autograd runs the hooks of a backward pass (a module's full backward hook, a tensor hook) with
gradients off unless that backward() was given `create_graph=True`, so what a hook computes from a
tensor that requires grad has no graph, and a backward() of it fails. The call PyTorch reports
through is the outer backward(), whose loss is fine; the failing call is the hook's. Found from the
error's traceback: the innermost user frame is a hook's `backward`/`grad` call, the engine's frames
lie between it and the outer call, and the hook's own variables hold a tensor (or a module with a
parameter) that requires grad, so its computation would have had a graph with gradients on. The
help runs the statements that build what the hook differentiates, through its backward(), under
`torch.enable_grad()`.
"""

from __future__ import annotations

import ast
import os

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import parse_file, source_line, statement_at, statement_location
from autograd_doctor.recording.frames import is_user_frame

_ENGINE_FILES = (os.path.join("torch", "autograd", "graph.py"), os.path.join("torch", "autograd", "__init__.py"))
_DIFFERENTIATING = ("backward", "grad")


def grad_off_in_backward_hook(error: BaseException, call, args: tuple, kwargs: dict) -> Diagnosis | None:
    if "does not require grad" not in str(error) or kwargs.get("create_graph"):
        return None
    frames = []
    traceback = error.__traceback__
    while traceback is not None:
        frames.append((traceback.tb_frame, traceback.tb_lineno))
        traceback = traceback.tb_next
    try:
        return _diagnosis(frames, call)
    finally:
        del frames


def _diagnosis(frames: list, call) -> Diagnosis | None:
    # The traceback runs from the doctor's call of the outer backward() down to the raise: the
    # outer call's own line is its site, and a user frame below the engine's is the hook.
    site = call.stack[0] if call is not None and getattr(call, "stack", None) else None
    users = [index for index, (frame, _) in enumerate(frames) if is_user_frame(frame)]
    if site is None or not users:
        return None
    inner = users[-1]
    between = [frame.f_code.co_filename for frame, _ in frames[:inner]]
    if not any(name.endswith(engine) for name in between for engine in _ENGINE_FILES):
        return None  # not run by the engine of an outer backward(): a plain call
    outer_file, outer_line = site.filename, site.lineno
    hook_frame, line = frames[inner]
    filename = hook_frame.f_code.co_filename
    if not _holds_grad_requiring(hook_frame.f_locals):
        return None  # nothing in the hook would have a graph even with gradients on
    torch_name = next((name for name, value in hook_frame.f_globals.items() if value is torch), None)
    tree = parse_file(filename)
    if tree is None or torch_name is None:
        return None
    hook = _function_named(tree, hook_frame.f_code.co_name, hook_frame.f_code.co_firstlineno)
    if hook is None:
        return None
    statement = next((s for s in hook.body if s.lineno <= line <= s.end_lineno), None)
    if statement is None or not _differentiates(statement):
        return None  # the call sits deeper than the hook's own statements: not rewritten blind
    block = _building_statements(hook.body, statement)
    help = _enable_grad_help(filename, block, torch_name)
    primary = statement_location(filename, statement, role="", note=f"runs with gradients off: {hook.name}() is a "
                                 f"hook that the backward() at line {outer_line} calls")
    outer_statement = statement_at(outer_file, outer_line)
    related = [] if outer_statement is None else [statement_location(
        outer_file, outer_statement, role="outer backward",
        note="autograd runs the hooks of this backward() with gradients off")]
    notes = [f"{hook.name}() is called by autograd during the backward() at line {outer_line}; autograd runs the hooks "
             "of a backward pass with gradients off (unless that backward() is given create_graph=True), so what "
             f"{hook.name}() computes from tensors that require grad has no grad_fn and its own backward() fails"]
    return Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
                     primary=primary, related=related, notes=notes, help=[help] if help is not None else [
                         Suggestion(f"compute what {hook.name}() differentiates under `with torch.enable_grad():`")])


def _holds_grad_requiring(values: dict) -> bool:
    for value in values.values():
        if isinstance(value, torch.Tensor) and value.requires_grad:
            return True
        if isinstance(value, torch.nn.Module) and any(p.requires_grad for p in list(value.parameters())[:1000]):
            return True
    return False


def _function_named(tree: ast.AST, name: str, first_line: int):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            decorated = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first_line in (node.lineno, decorated):
                return node
    return None


def _differentiates(statement: ast.stmt) -> bool:
    """The statement calls `<x>.backward(...)`, `backward(...)` or `<...>.grad(...)`."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in _DIFFERENTIATING:
                return True
    return False


def _names(node: ast.AST, context) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, context)}


def _building_statements(body: list, statement: ast.stmt) -> list:
    """The hook's statements from the first one that builds a value the differentiating statement
    reads (followed back through the names each reads) to that statement, in order."""
    position = body.index(statement)
    needed = _names(statement, ast.Load)
    first = position
    for index in range(position - 1, -1, -1):
        stored = _names(body[index], ast.Store)
        if stored & needed:
            first = index
            needed |= _names(body[index], ast.Load)
    return body[first:position + 1]


def _enable_grad_help(filename: str, block: list, torch_name: str) -> Suggestion | None:
    start, end = block[0].lineno, block[-1].end_lineno
    indent = source_line(filename, start)[: block[0].col_offset]
    lines = []
    for number in range(start, end + 1):
        text = source_line(filename, number)
        if text.strip() and not text.startswith(indent):
            return None
        lines.append("    " + text[len(indent):] if text.strip() else "")
    location = statement_location(filename, block[0])
    location.end_line = end
    location.end_column = block[-1].end_col_offset
    return Suggestion(f"run these statements under `with {torch_name}.enable_grad():`, so the hook's computation "
                      "records a graph its backward() can go through (the values are the same)",
                      "\n".join([f"with {torch_name}.enable_grad():", *lines]).rstrip(), location)
