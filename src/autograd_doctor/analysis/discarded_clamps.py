"""AD222: gradients clipped with the out-of-place `clamp` used as a statement, its result thrown away.

`param.grad.data.clamp(-1, 1)` (PyTorch's 2017 DQN tutorial) returns a clipped copy and leaves
the gradient as it was; `clamp_` clips in place. Nothing fails, and step() applies the unclipped
gradients the clipping was meant to bound.

Looked at once per step() line, from what is there when step() starts: in the function around the
step() call, an expression statement before it that calls `clamp` / `clip` / `clamp_min` /
`clamp_max` on something read through `.grad`, with number bounds, is reported only when a gradient
this optimizer is about to apply lies outside those bounds (the clamp did not clip it). The help
calls the in-place twin on the same line.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, segment, statement_children, statement_location

# The out-of-place clamps and the in-place method that does what the statement meant.
IN_PLACE = {"clamp": "clamp_", "clip": "clip_", "clamp_min": "clamp_min_", "clamp_max": "clamp_max_"}
# step() lines looked at per run (each once).
MAX_SITES = 32


class DiscardedClamps:
    """Per run: the step() lines already looked at."""

    def __init__(self) -> None:
        self._checked: set = set()
        # The call sites (code, offset) whose line is in `_checked`: at every step after the
        # first, the step() call is found here without working out its line from the code.
        self._sites_seen: set = set()

    def at_step(self, optimizer, step_stack) -> Diagnosis | None:
        if not step_stack or len(self._checked) >= MAX_SITES:
            return None
        site = step_stack[0]
        if site in self._sites_seen:
            return None
        key = (site.filename, site.lineno)
        if len(self._sites_seen) < 4 * MAX_SITES:
            self._sites_seen.add(site)
        if key in self._checked:
            return None
        self._checked.add(key)
        tree = parse_file(site.filename)
        if tree is None:
            return None
        scope = enclosing_function(tree, site.lineno)
        gradients = [p.grad for group in optimizer.param_groups for p in group["params"]
                     if isinstance(p.grad, torch.Tensor) and p.grad.layout == torch.strided]
        if not gradients:
            return None
        for statement in _statements(scope):
            found = _discarded_clamp(statement, site.lineno)
            if found is None:
                continue
            call, low, high = found
            outside = _count_outside(gradients, low, high)
            if outside:
                return _diagnosis(site, statement, call, low, high, outside, len(gradients), type(optimizer).__name__)
        return None


def _statements(scope: ast.AST):
    """The statements of `scope`, not those of the functions and classes defined inside it (their
    code runs elsewhere, if at all); expressions hold no statement and are not walked."""
    pending = statement_children(scope)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        pending.extend(statement_children(node))


def _discarded_clamp(statement: ast.AST, step_line: int) -> tuple[ast.Call, float | None, float | None] | None:
    """(call, low, high) for a statement `<... .grad ...>.clamp(low, high)` before `step_line`."""
    if not isinstance(statement, ast.Expr) or statement.lineno >= step_line \
            or statement.lineno != statement.end_lineno:
        return None
    call = statement.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in IN_PLACE):
        return None
    if not any(isinstance(node, ast.Attribute) and node.attr == "grad" for node in ast.walk(call.func.value)):
        return None
    bounds = _bounds(call)
    if bounds is None:
        return None
    return (call, *bounds)


def _number(node: ast.AST | None) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def _bounds(call: ast.Call) -> tuple[float | None, float | None] | None:
    """The clamp's number bounds (None for a side not given); None when a bound is not a number."""
    method = call.func.attr
    names = {"clamp_min": ("min",), "clamp_max": ("max",)}.get(method, ("min", "max"))
    given = dict(zip(names, call.args))
    given.update({k.arg: k.value for k in call.keywords if k.arg in names})
    if not given or len(call.args) > len(names) or any(k.arg not in names for k in call.keywords):
        return None
    values = {name: _number(node) for name, node in given.items()}
    if any(value is None for value in values.values()):
        return None
    return values.get("min"), values.get("max")


def _count_outside(gradients: list, low: float | None, high: float | None) -> int:
    """How many of the gradients hold a value outside [low, high]."""
    count = 0
    with torch.no_grad():
        for gradient in gradients:
            beyond = torch.zeros((), dtype=torch.bool, device=gradient.device)
            if low is not None:
                beyond = beyond | (gradient < low).any()
            if high is not None:
                beyond = beyond | (gradient > high).any()
            count += bool(beyond)
    return count


def _bounds_text(low: float | None, high: float | None) -> str:
    def shown(value: float) -> str:
        return str(int(value)) if value == int(value) else repr(value)

    if low is not None and high is not None:
        return f"[{shown(low)}, {shown(high)}]"
    return f">= {shown(low)}" if low is not None else f"<= {shown(high)}"


def _diagnosis(site, statement: ast.Expr, call: ast.Call, low, high, outside: int, total: int,
               optimizer_class: str) -> Diagnosis:
    filename = site.filename
    method = call.func.attr
    primary = statement_location(filename, statement, role="discarded",
                                 note=f"{method}() returns a clipped copy, which this statement throws away")
    step = location_of(site, role="step", note="applies the gradients as they are")
    notes = [f"when {optimizer_class}.step() started, {outside} of the {total} gradients it applies held values "
             f"outside {_bounds_text(low, high)}: the {method}() on this line did not change them",
             f"{method}() is out of place; {IN_PLACE[method]}() clips the tensor itself"]
    helps = []
    text = segment(filename, statement)
    start = call.func.end_col_offset - len(method) - statement.col_offset
    if text is not None and start > 0 and text[start:start + len(method)] == method:
        replacement = text[:start] + IN_PLACE[method] + text[start + len(method):]
        helps.append(Suggestion(f"clip in place with {IN_PLACE[method]}(), so step() applies the clipped gradients",
                                replacement, statement_location(filename, statement)))
    return Diagnosis(code=codes.DISCARDED_GRADIENT_CLAMP, title=codes.title(codes.DISCARDED_GRADIENT_CLAMP),
                     severity="warning", primary=primary, related=[step] if step is not None else [],
                     notes=notes, help=helps)
