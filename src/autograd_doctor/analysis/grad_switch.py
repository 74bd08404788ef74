"""AD301 when gradients are off because of a `torch.set_grad_enabled(False)` call that is still
in force: the loss has no history because nothing was recorded since that call, which may sit
several calls away from the training loop (an evaluation helper, a logging hook).

The line to change is that call; the help turns it into a `with torch.no_grad():` block over the
rest of its function, so the mode is restored when the function returns.
"""

from __future__ import annotations

import ast
import textwrap

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.describe import tensor_info
from autograd_doctor.analysis.grad_off_caller import OffAtEntry, decorator_help
from autograd_doctor.recording.frames import Site
from autograd_doctor.recording.switches import GradSwitch
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, segment, statement_at, statement_location


def switch_diagnosis(switch: GradSwitch, backward_site: Site | None, loss=None,
                     entry: OffAtEntry | None = None) -> Diagnosis:
    """`entry`: the function that calls backward(), when it was entered after the switch and
    computes the loss itself (analysis/grad_off_caller.py): it can turn gradients on for itself."""
    filename, line = switch.site.filename, switch.site.lineno
    name = _loss_name(backward_site)
    statement = statement_at(filename, line)
    primary = statement_location(filename, statement, role="grad off",
                                 note="turns gradients off for everything after it; nothing turns them on again")\
        if statement is not None else location_of(switch.site, role="grad off")
    related = []
    backward = location_of(backward_site, role="backward", note=f"backward() of {name or 'a loss'} computed while "
                           "gradients were still off") if backward_site is not None else None
    for caller in switch.callers:
        related.append(location_of(caller, role="called from", note=f"{switch.site.function}() is reached from here"))
    if backward is not None:
        related.append(backward)
    helps = []
    block = _as_block(filename, statement) if statement is not None else None
    if block is not None:
        helps.append(block)
    if entry is not None:
        helps.append(decorator_help(entry))
    else:
        helps.append(Suggestion("or turn gradients on again where this function's work ends "
                                "(torch.set_grad_enabled(True)), before training continues"))
    notes = [f"torch.set_grad_enabled(False) was called in {switch.site.function}() (line {line}) and stayed in "
             "force: the model's forward pass and the loss were computed with gradients off, so the loss has no "
             "grad_fn; the model itself is fine"]
    diagnosis = Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
                          primary=primary, related=related,
                          tensor=tensor_info(loss, name) if loss is not None else None, notes=notes, help=helps)
    diagnosis.extra.update({"cut": "set_grad_enabled"})
    return diagnosis


def _loss_name(site: Site | None) -> str | None:
    """`loss` for `loss.backward()` at the backward() call."""
    statement = statement_at(site.filename, site.lineno) if site is not None else None
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward":
        return segment(site.filename, call.func.value)
    return None


def _as_block(filename: str, statement: ast.stmt) -> Suggestion | None:
    """`with torch.no_grad():` over the rest of the function, for a switch in a function body."""
    tree = parse_file(filename)
    function = _function_holding(tree, statement) if tree is not None else None
    if function is None:
        return None
    rest = function.body[function.body.index(statement) + 1:]
    if not rest:
        return None
    text = "\n".join(_statement_text(filename, s) for s in rest)
    location = statement_location(filename, statement)
    location.end_line, location.end_column = rest[-1].end_lineno, rest[-1].end_col_offset
    return Suggestion(f"turn gradients off only for the rest of {function.name}(): a with block restores them when "
                      "it ends (also on return)", "with torch.no_grad():\n" + textwrap.indent(text, "    "), location)


def _function_holding(tree: ast.Module, statement: ast.stmt):
    """The function whose own body (not a nested block) holds `statement`."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(s is statement for s in node.body):
            return node
    return None


def _statement_text(filename: str, statement: ast.stmt) -> str:
    """The statement's source, its first line at column 0 and later lines kept relative to it."""
    return segment(filename, statement) or ast.unparse(statement)
