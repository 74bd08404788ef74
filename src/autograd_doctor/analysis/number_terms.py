"""AD206: a term of the loss was turned into a Python number (`.item()`, `float(...)`) before it
was added: it changes the loss's value but not one gradient, so it trains nothing, and nothing
is None to give it away.

Looked at once per backward() line, right after the backward call: the loss expression is read
from the source and split into its added terms (following names to their assignments in the
same function, `+=` included); a term made only of numbers that contains a conversion of a
tensor that requires grad is such a term. Values are read from the backward call's live frame,
never computed: nothing of the user's program runs again.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import live_frame, root_expression
from autograd_doctor.recording.frames import Site
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, segment, statement_at, statement_location

# How many assignments deep a name in the loss is followed.
MAX_DEPTH = 4


def number_term_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD206 for the loss backpropagated at `site` (the backward() call), or None."""
    if site is None:
        return None
    frame = live_frame(site)
    statement = statement_at(site.filename, site.lineno)
    root = root_expression(statement) if statement is not None else None
    tree = parse_file(site.filename)
    if frame is None or root is None or tree is None:
        return None
    scope = enclosing_function(tree, site.lineno)
    values = {**frame.f_globals, **frame.f_locals}
    for term, holder in _added_terms(root, scope, site.lineno, 0):
        conversion = _converted_tensor(term, values)
        if conversion is not None:
            return _diagnosis(site, holder, term, conversion)
    return None


def _added_terms(expression: ast.AST, scope: ast.AST, before: int, depth: int):
    """(term, statement holding it) for each term added into `expression`, following names."""
    if isinstance(expression, ast.BinOp) and isinstance(expression.op, (ast.Add, ast.Sub)):
        yield from _added_terms(expression.left, scope, before, depth)
        yield from _added_terms(expression.right, scope, before, depth)
        return
    if isinstance(expression, ast.Name) and depth < MAX_DEPTH:
        for statement in _bindings(scope, expression.id, before):
            value = statement.value
            if isinstance(statement, ast.AugAssign):
                if isinstance(statement.op, (ast.Add, ast.Sub)):
                    yield from ((term, holder if holder is not None else statement)
                                for term, holder in _added_terms(value, scope, statement.lineno, depth + 1))
                continue
            yield from ((term, holder if holder is not None else statement)
                        for term, holder in _added_terms(value, scope, statement.lineno, depth + 1))
            return
        return
    yield expression, None


def _bindings(scope: ast.AST, name: str, before: int) -> list[ast.stmt]:
    """The `+=` statements into `name` after its last plain assignment, then that assignment,
    all before line `before`, latest first."""
    found = [node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.AugAssign))
             and node.lineno < before and _binds(node, name)
             and not (node is not scope and _nested_function(scope, node))]
    found.sort(key=lambda node: node.lineno, reverse=True)
    result = []
    for node in found:
        result.append(node)
        if isinstance(node, ast.Assign):
            break
    return result


def _binds(node, name: str) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _nested_function(scope: ast.AST, node: ast.AST) -> bool:
    for inner in ast.walk(scope):
        if inner is not scope and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if inner.lineno <= node.lineno <= (inner.end_lineno or inner.lineno):
                return True
    return False


def _converted_tensor(term: ast.AST, values: dict):
    """(conversion call, receiver) when `term` is a number made from a tensor that requires grad:
    built only of numeric constants, Python numbers and `.item()` / `float()` of such a tensor."""
    conversions = []
    if not _number_expression(term, values, conversions):
        return None
    return next(((call, receiver) for call, receiver in conversions if _requires_grad(receiver, values)), None)


def _number_expression(node: ast.AST, values: dict, conversions: list) -> bool:
    """Is `node` a Python number for sure: constants, names and attributes holding numbers,
    arithmetic on them, and conversions (collected into `conversions`)?"""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return isinstance(_read(node, values), (int, float))
    if isinstance(node, ast.BinOp):
        return _number_expression(node.left, values, conversions) and _number_expression(node.right, values,
                                                                                         conversions)
    if isinstance(node, ast.UnaryOp):
        return _number_expression(node.operand, values, conversions)
    if isinstance(node, ast.Call):
        receiver = _conversion_receiver(node)
        if receiver is not None:
            conversions.append((node, receiver))
            return True
    return False


def _read(node: ast.AST, values: dict):
    """A name's or plain attribute chain's value from the frame (getattr only, nothing called)."""
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _read(node.value, values)
        return getattr(owner, node.attr, None) if owner is not None and not isinstance(owner, torch.Tensor) else None
    return None


def _conversion_receiver(call: ast.Call) -> ast.AST | None:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "item" and not call.args:
        return call.func.value
    if isinstance(call.func, ast.Name) and call.func.id == "float" and len(call.args) == 1:
        return call.args[0]
    return None


def _requires_grad(receiver: ast.AST, values: dict) -> bool:
    """The receiver is (or is computed from) a tensor that requires grad: its names are read from
    the frame, nothing is evaluated."""
    for node in ast.walk(receiver):
        if isinstance(node, ast.Name):
            value = values.get(node.id)
            if isinstance(value, torch.Tensor) and value.requires_grad:
                return True
            if isinstance(value, torch.nn.Module) and any(p.requires_grad for p in value.parameters()):
                return True
    return False


def _diagnosis(site: Site, holder: ast.stmt | None, term: ast.AST, conversion) -> Diagnosis:
    call, receiver = conversion
    filename = site.filename
    holder = holder or statement_at(filename, site.lineno)
    converted = segment(filename, call) or ast.unparse(call)
    tensor_text = segment(filename, receiver) or ast.unparse(receiver)
    location = statement_location(filename, holder, role="number", note=f"{converted} is a Python number: the term "
                                  "adds to the loss's value but has no gradient")
    backward = statement_location(filename, statement_at(filename, site.lineno), role="backward",
                                  note="backward() of a loss that includes the term")
    helps = []
    replaced = replace_node_text(filename, holder, call, tensor_text if isinstance(
        receiver, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({tensor_text})")
    if replaced is not None:
        helps.append(Suggestion(f"add the tensor itself, so the term trains what it is computed from: keep .item() / "
                                "float() for logging only", replaced, statement_location(filename, holder)))
    notes = [f"{tensor_text} requires grad, but {converted} turns it into a plain number: added to the loss, a number "
             "shifts the loss value and contributes no gradient, so whatever computed it is not trained by this term"]
    return Diagnosis(code=codes.NUMBER_TERM_IN_LOSS, title=codes.title(codes.NUMBER_TERM_IN_LOSS), severity="warning",
                     primary=location, related=[backward] if backward.line != location.line else [], notes=notes,
                     help=helps)
