"""Anomaly mode's "Function 'XBackward0' returned nan values": the forward line of that op
(recorded by anomaly mode on the node) and the operation whose derivative blows up there."""

from __future__ import annotations

import ast
import re

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, statement_of, text_of
from autograd_doctor.analysis.errors.context import ErrorContext, graph_node_named
from autograd_doctor.recording.frames import is_internal_file
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import replace_node_text

EPS = "1e-12"
# Ops whose derivative is infinite (or undefined) at 0: an infinite gradient times a zero
# gradient further down gives NaN, often in the op *before* them (a square before a sqrt).
SINGULAR_AT_ZERO = {"sqrt": "sqrt", "log": "log", "rsqrt": "rsqrt", "log2": "log2", "log10": "log10"}
SINGULAR_NODES = {"SqrtBackward0": "sqrt", "LogBackward0": "log", "RsqrtBackward0": "rsqrt",
                  "DivBackward0": "division", "PowBackward0": "pow", "NormBackward1": "norm",
                  "LinalgVectorNormBackward0": "norm", "AcosBackward0": "acos", "AsinBackward0": "asin"}


def _forward_site(node) -> tuple[str, int] | None:
    """(file, line) of the innermost user frame in the forward traceback anomaly mode kept."""
    lines = (getattr(node, "metadata", None) or {}).get("traceback_") or []
    best = None
    for entry in lines:
        for filename, line in re.findall(r'File "([^"]+)", line (\d+)', entry):
            if not is_internal_file(filename):
                best = (filename, int(line))
    return best


def nan_in_backward(context: ErrorContext, already):
    match = re.search(r"Function '(\w+)' returned nan values in its (\d+)\w* output", context.message)
    if match is None:
        return None
    node_name = match.group(1)
    node, path = graph_node_named(context, node_name, with_path=True)
    site = _forward_site(node) if node is not None else None
    use = context.raise_location(role="backward", note="backward() found the NaN")
    notes = [f"{node_name} computed NaN: its input hit a point where the derivative is infinite or "
             "undefined (sqrt or log at 0, x/0, 0/0, norm of a zero vector); an infinite gradient times 0 "
             "gives NaN, often one op before the singular one"]
    later = [SINGULAR_NODES[type(n).__name__] for n in path if type(n).__name__ in SINGULAR_NODES]
    if later:
        notes.append(f"after {node_name} in the forward pass: {', '.join(dict.fromkeys(later))}")
    if site is None:
        return diagnosis(codes.NAN_IN_BACKWARD, use, notes=notes, help=[Suggestion(
            "run the forward pass inside torch.autograd.detect_anomaly() too, so the forward line is known; "
            "keep inputs of sqrt/log/division away from 0 (clamp_min(eps), + eps)")])
    filename, line = site
    statement, location = statement_of(filename, line)
    if location is None:
        return diagnosis(codes.NAN_IN_BACKWARD, use, notes=notes)
    location.role = "forward"
    location.note = f"the forward op of {node_name}"
    helps = []
    fix = _clamp_fix(filename, statement, node)
    if fix is not None:
        op, new_statement = fix
        helps.append(statement_change(location, f"keep the input of {op} away from 0: clamp_min({EPS}) gives "
                                      "it a finite gradient there (0 where clamped)", new_statement))
    elif node_name == "DivBackward0" and match.group(2) == "0":
        # NaN in the gradient of the numerator, g / b, is 0 / 0: the gradient reaching the
        # division is 0 exactly where the denominator is 0 (a NaN reaching it would have stopped
        # anomaly mode one node earlier), so those elements do not reach the result and giving
        # them no gradient keeps the program's meaning. NaN only in the denominator's gradient,
        # -g * a / b**2, can come from a used 0/0 element (g != 0): no change then.
        new_statement = _division_fix(filename, statement)
        if new_statement is not None:
            helps.append(statement_change(
                location, "divide only where the denominator is not 0 (the double torch.where): the forward "
                "values stay the same, and the elements whose denominator is 0 (x/0, 0/0: no derivative) get "
                "no gradient instead of NaN", new_statement))
    helps.append(Suggestion(f"add a small eps where a value can reach 0: x.clamp_min({EPS}).sqrt(), "
                            f"torch.log(p.clamp_min({EPS})), a / (b + {EPS}); or mask those elements out "
                            "with torch.where before the singular op"))
    return diagnosis(codes.NAN_IN_BACKWARD, location, [use], notes, helps)


def _clamp_fix(filename: str, statement: ast.stmt, node=None):
    """(op, new statement) when the line has exactly one sqrt/log call to clamp (or one fractional
    power; `node` is the backward node that computed NaN, whose saved exponent a PowBackward0 gives)."""
    calls = [c for name in SINGULAR_AT_ZERO for c in find_calls(statement, name)]
    if not calls:
        saved = _saved_exponent(node) if node is not None and type(node).__name__ == "PowBackward0" else None
        return _fractional_power_fix(filename, statement, saved)
    if len(calls) != 1:
        return None
    call = calls[0]
    op = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
    if isinstance(call.func, ast.Attribute) and not call.args:
        # x.sqrt() -> x.clamp_min(eps).sqrt()
        receiver = call.func.value
        new = replace_node_text(filename, statement, receiver, f"{text_of(filename, receiver)}.clamp_min({EPS})")
    elif call.args:
        # torch.sqrt(x) -> torch.sqrt(x.clamp_min(eps))
        argument = call.args[0]
        text = text_of(filename, argument)
        if not isinstance(argument, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            text = f"({text})"
        new = replace_node_text(filename, statement, argument, f"{text}.clamp_min({EPS})")
    else:
        return None
    return (op, new) if new is not None else None


# Operands the double-where change may evaluate more than once: no calls, so nothing runs twice.
_PLAIN_OPERANDS = (ast.Name, ast.Attribute, ast.Subscript)


def _division_fix(filename: str, statement: ast.stmt) -> str | None:
    """The statement with its one tensor division `a / b` (`torch.div(a, b)`, `a.div(b)`) written
    `torch.where(b != 0, a / torch.where(b != 0, b, torch.ones_like(b)), (a / b).detach())`: the
    same values everywhere (a/0 where b is 0, taken from the detached quotient), and a zero
    gradient instead of 0/0 at those elements. Only for plain operands (names, attributes,
    subscripts), which the new text evaluates again; None for any other shape."""
    divisions = []
    for node in ast.walk(statement):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            divisions.append((node, node.left, node.right))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "div", "true_divide", "divide") and not node.keywords:
            if isinstance(node.func, ast.Attribute) and _is_torch(node.func.value) and len(node.args) == 2:
                divisions.append((node, node.args[0], node.args[1]))
            elif isinstance(node.func, ast.Attribute) and not _is_torch(node.func.value) and len(node.args) == 1:
                divisions.append((node, node.func.value, node.args[0]))
    if len(divisions) != 1:
        return None
    node, numerator, denominator = divisions[0]
    if not all(isinstance(side, _PLAIN_OPERANDS) for side in (numerator, denominator)):
        return None
    a, b = text_of(filename, numerator), text_of(filename, denominator)
    if a is None or b is None:
        return None
    text = (f"torch.where({b} != 0, {a} / torch.where({b} != 0, {b}, torch.ones_like({b})), "
            f"({a} / {b}).detach())")
    return replace_node_text(filename, statement, node, text)


def _fractional_power_fix(filename: str, statement: ast.stmt, saved_exponent: float | None = None):
    """(op, new statement) for one power with a constant exponent between 0 and 1 (`d.pow(0.5)`,
    `torch.pow(d, 0.5)`, `d ** 0.5`): a root by another spelling, singular at 0 like sqrt. An
    exponent given by a name or an expression (`(1 - p) ** gamma`) counts with the exponent that
    the failing PowBackward0 node saved, `saved_exponent`, when the line has that one power."""
    powers = [node for node in ast.walk(statement) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
              or isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "pow"]
    bases = []
    for node in ast.walk(statement):
        exponent = base = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            base, exponent = node.left, node.right
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "pow":
            if isinstance(node.func, ast.Attribute) and len(node.args) == 1 and not _is_torch(node.func.value):
                base, exponent = node.func.value, node.args[0]
            elif len(node.args) == 2:
                base, exponent = node.args
        try:
            value = ast.literal_eval(exponent) if exponent is not None else None
        except (ValueError, SyntaxError):
            value = _constant_ratio(exponent)
            if value is None and len(powers) == 1:
                value = saved_exponent
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1:
            bases.append(base)
    if len(bases) != 1:
        return None
    base = bases[0]
    text = text_of(filename, base)
    if not isinstance(base, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    new = replace_node_text(filename, statement, base, f"{text}.clamp_min({EPS})")
    return ("a fractional power (a root)", new) if new is not None else None


def _saved_exponent(node) -> float | None:
    """The scalar exponent a PowBackward0 node saved (its attribute, read without running user code)."""
    try:
        exponent = node._saved_exponent
    except Exception:
        return None
    return float(exponent) if isinstance(exponent, (int, float)) and not isinstance(exponent, bool) else None


def _is_torch(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("torch", "th")


def _constant_ratio(node) -> float | None:
    """1 / 3 written as a division of two numbers."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            all(isinstance(side, ast.Constant) and isinstance(side.value, (int, float)) for side in (node.left, node.right)) \
            and node.right.value:
        return node.left.value / node.right.value
    return None


MATCHERS = [
    (r"Function '\w+' returned nan values in its \d+\w* output", nan_in_backward),
]
