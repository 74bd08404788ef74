"""AD180: an L-BFGS closure that does not clear the gradients before its backward().

`optimizer.step(closure)` lets L-BFGS evaluate the objective several times per step and read the
gradient at each trial point from `.grad`. backward() adds to `.grad`, so a closure without a
`zero_grad()` (one moved out of it, before the step, to allow gradient accumulation: skorch#636)
hands L-BFGS the running sum of every evaluation's gradient: the search directions and the
curvature pairs are wrong and nothing fails. Judged when the doctor stops, from the steps the
recording saw (recording/closure_steps.py): every evaluation of the step added into the gradient
tensor the previous one left.

The change, where the source shows it: the closure is a `def` nested in the function that calls
`<optimizer>.step(closure)`, so the optimizer's expression there (`self.optimizer`) names the same
optimizer inside the closure; `<optimizer>.zero_grad()` becomes the closure's first statement.
"""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    display_path, location_of, parse_file, segment, source_line, statement_at, walk_covering,
)

ADVICE = ("clear the gradients at the top of the closure (optimizer.zero_grad() before the forward pass), so that "
          "each evaluation's backward() leaves exactly the gradient at its own trial point")


def uncleared_closure_diagnoses(recorder) -> list[Diagnosis]:
    found: dict = {}  # the closure's code -> its diagnosis
    for step in recorder.closure_steps.without_clearing:
        code = step.closure_code
        key = code if code is not None else step.step_site
        if step.step_site is None or key in found:
            continue
        step_location = location_of(step.step_site, role="step",
                                    note=f"this step evaluated the closure {step.evaluations} times; each evaluation "
                                         "added its gradient to the previous ones")
        if step_location is None:
            continue
        definition = _closure_definition(code) if code is not None else None
        primary = step_location
        related = []
        if definition is not None:
            filename, node = definition
            primary = Location(file=display_path(filename), line=node.lineno, column=node.col_offset,
                               source=source_line(filename, node.lineno).strip(), role="closure",
                               note="calls backward() without clearing the gradients first")
            related.append(step_location)
        notes = ["L-BFGS calls the closure once per trial point and reads .grad afterwards as the gradient there; "
                 "backward() adds to .grad, so without a zero_grad() in the closure each evaluation sees the sum of "
                 "the gradients of all evaluations so far (no error)"]
        help_ = _clear_first(definition, step.step_site) if definition is not None else None
        found[key] = Diagnosis(code=codes.CLOSURE_GRADIENTS_NOT_CLEARED,
                               title=codes.title(codes.CLOSURE_GRADIENTS_NOT_CLEARED), severity="warning",
                               primary=primary, related=related, notes=notes, help=[help_ or Suggestion(ADVICE)])
    return list(found.values())


def _closure_definition(code) -> tuple[str, ast.FunctionDef] | None:
    """(file, def) of the closure's `def` in the user's file; None for a lambda or an unreadable file."""
    if code.co_name == "<lambda>":
        return None
    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name \
                and (node.lineno == code.co_firstlineno
                     or (node.decorator_list and node.decorator_list[0].lineno == code.co_firstlineno)):
            return code.co_filename, node
    return None


def _function_around(tree, statement: ast.stmt, exclude):
    """The innermost function (or the module) whose body holds `statement`, other than `exclude`."""
    best = tree
    for node in walk_covering(tree, statement.lineno):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not exclude \
                and node.lineno < statement.lineno <= (node.end_lineno or node.lineno) \
                and (best is tree or node.lineno >= best.lineno):
            best = node
    return best


def _clear_first(definition, step_site) -> Suggestion | None:
    """`<optimizer>.zero_grad()` as the closure's first statement, when the closure is nested in the
    function whose `<optimizer>.step(closure)` ran (the same file), so that the expression names the
    same optimizer inside it. After a docstring, which stays the closure's docstring."""
    filename, node = definition
    if step_site.filename != filename:
        return None
    tree = parse_file(filename)
    step = statement_at(filename, step_site.lineno)
    call = step.value if isinstance(step, (ast.Expr, ast.Assign, ast.Return)) else None
    if tree is None or not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "step" and len(call.args) == 1
                            and isinstance(call.args[0], ast.Name) and call.args[0].id == node.name):
        return None
    if _function_around(tree, step, exclude=None) is not _function_around(tree, node, exclude=node):
        return None
    optimizer = segment(filename, call.func.value)
    if optimizer is None:
        return None
    body = node.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    first = body[1] if docstring and len(body) > 1 else body[0]
    if first is body[0] and docstring or first.lineno == node.lineno:
        return None  # only a docstring, or a one-line def: no line to put the clear on
    # The header (and docstring), the clear, then the first statement as written: the change spans
    # lines, so every reader of the help (the JSON report's line and end_line) replaces the same ones.
    kept = [source_line(filename, n)[node.col_offset:] for n in range(node.lineno, first.lineno)]
    following = [source_line(filename, n)[node.col_offset:] for n in range(first.lineno, first.end_lineno + 1)]
    inner = " " * (first.col_offset - node.col_offset)
    location = Location(display_path(filename), node.lineno, node.col_offset, end_line=first.end_lineno,
                        source=source_line(filename, node.lineno).strip())
    return Suggestion(f"clear the gradients at the top of the closure, {optimizer}.zero_grad(): each evaluation's "
                      "backward() then leaves the gradient at its own trial point, which L-BFGS reads",
                      "\n".join(kept + [f"{inner}{optimizer}.zero_grad()"] + following), location)


__all__ = ["uncleared_closure_diagnoses"]
