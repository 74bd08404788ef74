"""AD318: a `with torch.no_grad():` block inside a function that torch.func's forward mode (jvp,
jacfwd) transforms. Forward-mode AD ignores grad mode, so the names the block bound carry a tangent
and the transform differentiates them, where reverse mode (jacrev, backward) treats them as
constants. The recorder (`recording/switches.py`) notes the blocks and the names; this module
names each one's assignment inside the block and offers `.detach()` on its value, which drops the
tangent as well as the graph (the meaning the block states). Silent: the help is unverified."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, source_line, statement_location
from autograd_doctor.recording import switches

# Values that take `.detach()` without parentheses around them.
_ATOMIC = (ast.Call, ast.Attribute, ast.Name, ast.Subscript)


def forward_no_grad_diagnoses() -> list[Diagnosis]:
    found = []
    for block in switches.differentiated_no_grad_blocks():
        diagnosis = _diagnosis(block)
        if diagnosis is not None:
            found.append(diagnosis)
    return found


def _with_statement(filename: str, line: int) -> ast.With | None:
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and node.lineno == line:
            return node
    return None


def _assignments(block: ast.With, name: str) -> list[ast.Assign]:
    """The block's plain `name = value` statements (its own body, nested blocks included)."""
    found = []
    for node in ast.walk(block):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id == name:
            found.append(node)
    return found


def _diagnosis(block) -> Diagnosis | None:
    statement = _with_statement(block.filename, block.line)
    if statement is None:
        return None
    names = ", ".join(f"`{name}`" for name in block.names)
    assigned = [(name, _assignments(statement, name)) for name in block.names]
    primary = None
    helps = []
    for name, statements in assigned:
        if len(statements) != 1:
            continue  # bound by a loop, a tuple or several times: the line to change is not one
        assignment = statements[0]
        if primary is None:
            primary = statement_location(block.filename, assignment, role="no_grad",
                                         note=f"`{name}` still carries a tangent: jacfwd/jvp differentiate it")
        value = assignment.value
        text = source_line(block.filename, value.lineno)[value.col_offset:value.end_col_offset] \
            if value.lineno == value.end_lineno else None
        if text is None:
            continue
        detached = f"{text}.detach()" if isinstance(value, _ATOMIC) else f"({text}).detach()"
        replacement = replace_node_text(block.filename, assignment, value, detached)
        if replacement is None:
            continue
        helps.append(Suggestion(
            f"detach `{name}` inside the block, so that forward mode treats it as the constant the `no_grad` "
            f"block means, as reverse mode (jacrev, backward) already does (unverified: nothing raised)",
            replacement, statement_location(block.filename, assignment), corrects_forward_values=True))
    with_location = statement_location(block.filename, statement, role="no_grad",
                                       note="turns off reverse-mode autograd only")
    if primary is None:
        primary = with_location
        related = []
    else:
        related = [Location(file=with_location.file, line=with_location.line, column=with_location.column,
                            end_line=with_location.line, end_column=None,
                            source=with_location.source, role="no_grad", note=with_location.note)]
    if not helps:
        helps.append(Suggestion(f"detach {names} inside the block (`.detach()`): detach() drops the tangent as "
                                "well as the graph"))
    calls = f" ({block.calls} times)" if block.calls > 1 else ""
    where = ("inside a reverse-mode torch.func transform (grad, jacrev) that a forward-mode one encloses "
             "(hessian, which is jacfwd over jacrev, or jvp over grad)" if block.nested else
             "inside a forward-mode torch.func transform (jvp, or jacfwd, which is vmap over jvp)")
    notes = [f"this block ran {where}{calls}, and {names} came out of it with a tangent: forward-mode AD "
             f"does not honour torch.no_grad(), so wherever the result uses {names}, the transform counts its "
             f"derivative, while jacrev, vjp or backward() of the same function treat it as a constant (no error)"]
    return Diagnosis(code=codes.NO_GRAD_UNDER_FORWARD_TRANSFORM, title=codes.title(codes.NO_GRAD_UNDER_FORWARD_TRANSFORM),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)


__all__ = ["forward_no_grad_diagnoses"]
