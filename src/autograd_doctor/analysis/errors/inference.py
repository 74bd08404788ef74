"""Inference tensors used where autograd needs normal tensors: saved for backward, written in
place outside inference mode, given requires_grad. The line to change is the
`inference_mode` block or decorator that made the tensor, often far from the failure."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import (
    diagnosis, find_calls, line_change, statement_change, text_of, user_statement,
)
from autograd_doctor.analysis.errors.context import (
    ErrorContext, context_call_name, last_assignment, line_location, with_block_around,
)
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.recording import switches
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, statement_at, statement_location


def _inference_locals(frame) -> list[str]:
    names = []
    for name, value in list(frame.f_locals.items()):
        try:
            if hasattr(value, "is_inference") and value.is_inference():
                names.append(name)
        except Exception:
            continue
    return names


def _block_for(filename: str, name: str | None, line: int):
    """(filename, line, is_decorator) of the inference_mode that made `name`.

    First the `with torch.inference_mode()` around the statement that assigned it; else the
    most recently entered inference_mode the doctor saw (a decorator, a block in a library).
    """
    if name:
        assignment = last_assignment(filename, name, line)
        if assignment is not None:
            block = with_block_around(filename, assignment.lineno, ("inference_mode",))
            if block is not None:
                return filename, block.lineno, False
    recorded = switches.mode_entries("inference_mode")
    if recorded:
        entry = recorded[0]
        return entry.filename, entry.line, entry.decorator
    return None


def _decorator_line(filename: str, first_line: int) -> int | None:
    """The line of the `@...inference_mode(...)` decorator of the def starting at `first_line`."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            if node.decorator_list[0].lineno == first_line or node.lineno == first_line:
                for decorator in node.decorator_list:
                    if context_call_name(decorator) == "inference_mode":
                        return decorator.lineno
    return None


def _block_location_and_fix(found):
    """The location of the inference_mode block/decorator and the change to no_grad."""
    if found is None:
        return None, None
    filename, line, is_decorator = found
    if is_decorator:
        line = _decorator_line(filename, line) or line
    what = "decorator" if is_decorator else "block"
    location = line_location(filename, line, role="inference_mode",
                             note=f"the tensor was made under this inference_mode {what}")
    fix = line_change(filename, line, "inference_mode()", "no_grad()",
                      "use torch.no_grad() here: it also turns gradients off, but its results are normal "
                      "tensors that autograd can use later")
    return location, fix


def _call_site_copy(found):
    """(location, change) at the one line of the user's that called an `@torch.inference_mode()`
    function in this session, when that line binds the call's result to one name
    (`ids = model.generate(...)`) outside any inference_mode block: the change copies the result
    there (`.clone()` outside inference mode makes a normal tensor; the values are the same), which
    leaves the decorated function as it is for its other uses. None otherwise (several call sites:
    which result failed is not known; a tuple target: the result is not one tensor)."""
    if found is None or not found[2]:
        return None
    recorded = switches.mode_entries("inference_mode")
    entry = recorded[0] if recorded else None
    if entry is None or not entry.decorator or len(entry.callers) != 1:
        return None
    filename, line = entry.callers[0]
    statement = statement_at(filename, line)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Name) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    called = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if called != entry.function or with_block_around(filename, statement.lineno, ("inference_mode",)) is not None:
        return None
    call_text = text_of(filename, call)
    changed = replace_node_text(filename, statement, call, f"{call_text}.clone()") if call_text else None
    if changed is None:
        return None
    name = statement.targets[0].id
    location = statement_location(filename, statement, role="call",
                                  note=f"{name} is the result of {entry.function}(), made under its "
                                       "@torch.inference_mode() decorator")
    return location, Suggestion(f"copy the result here: {called}(...).clone(), called outside inference mode, is a "
                                f"normal tensor with the same values, and {entry.function}() stays as it is",
                                changed, location)


def inference_tensor_saved(context: ErrorContext, already):
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    use = context.raise_location(role="use", note="used here in a computation autograd records")
    names = _inference_locals(frame)
    name = names[0] if len(names) == 1 else None
    made = _block_for(filename, name, line)
    block, fix = _block_location_and_fix(made)
    helps = [fix] if fix is not None else []
    call_site = _call_site_copy(made) if block is not None else None
    if call_site is not None:
        # The decorated function's caller holds the result: the change goes there first, the
        # decorator stays a related location (its change to no_grad is the second help).
        call_location, copy = call_site
        helps.insert(0, copy)
        notes = [f"{name or 'a tensor used here'} comes from the result of a function decorated with "
                 "@torch.inference_mode(): such tensors can never be saved for backward"]
        return diagnosis(codes.INFERENCE_TENSOR_SAVED, call_location, [block, use], notes, helps)
    if name:
        helps.append(Suggestion(f"or, if inference_mode must stay, use a normal copy here: "
                                f"{name} = {name}.clone() before this line"))
    notes = [f"{name or 'a tensor used here'} was made under torch.inference_mode(): such tensors can never "
             "be saved for backward"]
    if block is None:
        return diagnosis(codes.INFERENCE_TENSOR_SAVED, use, notes=notes, help=helps or [Suggestion(
            "find the torch.inference_mode() that made this tensor and use torch.no_grad() there instead")])
    return diagnosis(codes.INFERENCE_TENSOR_SAVED, block, [use], notes, helps)


def inference_tensor_written(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    location.note = "in-place write to a tensor made under inference_mode"
    name = _written(statement)
    block, fix = _block_location_and_fix(_block_for(filename, name, line))
    helps = []
    new_statement = _out_of_place(statement, filename)
    if new_statement is not None:
        helps.append(statement_change(location, f"write out of place: {name} then becomes a normal tensor",
                                      new_statement))
    if fix is not None:
        helps.append(fix)
    notes = [f"{name or 'the tensor'} was made under torch.inference_mode(); outside that block it can be read "
             "but not written"]
    return diagnosis(codes.INFERENCE_TENSOR_INPLACE, location, [block], notes,
                     helps or [Suggestion("clone it first (t = t.clone()) or write out of place")])


def _written(statement) -> str | None:
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and isinstance(func.value, ast.Name):
            return func.value.id
    return None


_AUG_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@"}


def _out_of_place(statement, filename: str) -> str | None:
    """`x = x + y` for `x += y`; `x = x.add(y)` for `x.add_(y)`."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        operator = _AUG_OPERATORS.get(type(statement.op))
        if operator is None:
            return None
        name = statement.target.id
        return f"{name} = {name} {operator} {text_of(filename, statement.value)}"
    name = _written(statement)
    if name is not None:
        call = statement.value
        method = call.func.attr[:-1]
        arguments = ", ".join(text_of(filename, a) for a in [*call.args, *call.keywords])
        return f"{name} = {name}.{method}({arguments})"
    return None


def inference_tensor_requires_grad(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    location.note = "requires_grad on a tensor made under inference_mode"
    calls = find_calls(statement, "requires_grad_")
    name = None
    helps = []
    if len(calls) == 1 and isinstance(calls[0].func, ast.Attribute) and isinstance(calls[0].func.value, ast.Name):
        name = calls[0].func.value.id
        if isinstance(statement, ast.Expr):
            helps.append(statement_change(location, f"make a normal copy first: {name}.clone() outside "
                                          "inference_mode is an ordinary tensor", f"{name} = {name}.clone().requires_grad_()"))
    block, fix = _block_location_and_fix(_block_for(filename, name, line))
    if fix is not None:
        helps.append(fix)
    notes = [f"{name or 'the tensor'} was made under torch.inference_mode(); such tensors cannot join a graph"]
    return diagnosis(codes.INFERENCE_TENSOR_REQUIRES_GRAD, location, [block], notes,
                     helps or [Suggestion("clone it first: t = t.clone().requires_grad_()")])


def inference_tensor_version(context: ErrorContext, already):
    """`t._version` read on a tensor made under inference_mode (a cache keyed by the version, a
    library that checks for in-place changes): inference tensors have no version counter."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    reads = [node for node in ast.walk(statement) if isinstance(node, ast.Attribute) and node.attr == "_version"]
    name = text_of(filename, reads[0].value) if len(reads) == 1 else None
    inference = _inference_locals(frame)
    if name is None and len(inference) == 1:
        name = inference[0]
    location.role = "read"
    location.note = f"reads the version counter of {name or 'a tensor'}, made under inference_mode"
    block, fix = _block_location_and_fix(_block_for(filename, name if name and name.isidentifier() else None, line))
    notes = [f"{name or 'the tensor'} was made under torch.inference_mode(), which skips version counters to run "
             "faster; code that reads a tensor's version (to notice in-place changes) cannot work on it"]
    helps = [fix] if fix is not None else []
    if name and name.isidentifier():
        helps.append(Suggestion(f"or, if inference_mode must stay, give this code a normal copy: {name} = "
                                f"{name}.clone() outside the block, before this line"))
    if block is None:
        return diagnosis(codes.INFERENCE_TENSOR_VERSION, location, notes=notes, help=helps or [Suggestion(
            "find the torch.inference_mode() that made this tensor and use torch.no_grad() there instead")])
    return diagnosis(codes.INFERENCE_TENSOR_VERSION, block, [location], notes, helps)


MATCHERS = [
    (r"Inference tensors do not track version counter", inference_tensor_version),
    (r"Inference tensors cannot be saved for backward", inference_tensor_saved),
    (r"Inplace update to inference tensor outside InferenceMode is not allowed", inference_tensor_written),
    (r"Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
     inference_tensor_requires_grad),
]
