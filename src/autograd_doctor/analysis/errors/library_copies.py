"""AD303 for a deep copy made by library code that holds its own reference to `copy.deepcopy`.

The recorder sees `copy.deepcopy(...)` through the `copy` module's attribute. A library that did
`from copy import deepcopy` when it was imported (torch.optim.swa_utils.AveragedModel, an EMA
helper, a Trainer's checkpoint callback) calls the function it bound, so the recorder's wrapper never
runs and the error came with no diagnosis. The traceback still holds the copy: the outermost frame of
`copy.deepcopy` has the object being copied (its `x`). The diagnosis is the one a direct deepcopy gets,
named from the user's call that led there (`AveragedModel(model)`: the paths start at `model`)."""

from __future__ import annotations

import ast
import copy
import re

from autograd_doctor.analysis.errors.context import ErrorContext
from autograd_doctor.diagnosis.source import statement_at


def _copied_object(context: ErrorContext):
    """The object the outermost `copy.deepcopy` frame of the traceback was copying; None when there is
    no such frame."""
    for frame, _ in context.frames:  # outermost first
        if frame.f_code.co_name == "deepcopy" and frame.f_code.co_filename == copy.__file__:
            return frame.f_locals.get("x"), True
    return None, False


def _argument_naming(frame, line: int, obj) -> str | None:
    """The text of the argument of the user's statement at `line` whose value is `obj` (a name, or an
    attribute chain of names), read without calling anything."""
    statement = statement_at(frame.f_code.co_filename, line)
    if statement is None:
        return None
    scope = {**frame.f_globals, **frame.f_locals}
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        for argument in list(node.args) + [k.value for k in node.keywords]:
            parts, current = [], argument
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if not isinstance(current, ast.Name) or current.id not in scope:
                continue
            value = scope[current.id]
            for part in reversed(parts):
                value = _stored_attribute(value, part)
            if value is obj:
                return ast.unparse(argument)
    return None


def _stored_attribute(owner, name: str):
    """`owner.name` where it is stored (a submodule, a parameter, a buffer, an instance attribute),
    never by running a property."""
    for store in ("_modules", "_parameters", "_buffers"):
        held = getattr(owner, "__dict__", {}).get(store)
        if isinstance(held, dict) and name in held:
            return held[name]
    return getattr(owner, "__dict__", {}).get(name)


# PyTorch's message (analysis/copies.py's DEEPCOPY_MESSAGE, which imports this package: not imported here).
_MESSAGE = "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol"


def deepcopy_in_library(context: ErrorContext, already):
    from autograd_doctor.analysis.copies import deepcopy_error_diagnosis, traceback_stack

    obj, found = _copied_object(context)
    if not found:
        return None
    user = context.innermost_user()
    if user is None:
        return None
    frame, line = user
    if frame.f_code.co_filename == copy.__file__:
        return None
    root = _argument_naming(frame, line, obj)
    found = deepcopy_error_diagnosis(context.error, obj, traceback_stack(context.error), root_name=root)
    if found is not None and found.primary is not None and found.primary.line == line:
        found.primary.note = (f"copy.deepcopy({root or 'the object'}) runs inside this call (in library code), "
                              "and fails")
    return found


MATCHERS = [
    (re.escape(_MESSAGE), deepcopy_in_library),
]
