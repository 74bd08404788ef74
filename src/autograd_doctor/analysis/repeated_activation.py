"""An idempotent in-place activation applied again to a tensor it has already rectified.

`out = self.relu(f4)` with `self.relu = nn.ReLU(inplace=True)` rectifies f4 in place (out is f4);
a later `self.relu(f4)` (or `self.relu(out)`) in the same function writes into that tensor again.
ReLU keeps its output for backward, so the second write breaks backward (AD101), yet it changes
no value: the ReLU of a rectified tensor is itself. The line to change is the second call, not the
module's definition: the call is replaced by its argument, which keeps the memory the in-place
module was chosen for and computes the same values. Only activations whose second application is
the identity qualify (ReLU, ReLU6, Hardtanh: a clamp of a clamped tensor); LeakyReLU or ELU would
change the values again, so their definition stays the line to change."""

from __future__ import annotations

import ast

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    parse_file, replace_node_text, segment, statement_at, statement_location,
)

IDEMPOTENT_ACTIVATIONS = {"ReLU", "ReLU6", "Hardtanh"}


def repeated_activation_help(filename: str, line: int, module_class: str) -> tuple[Location, Suggestion] | None:
    """(the call's location, the help replacing the call with its argument) when the statement at
    `line` calls an idempotent in-place activation (`self.relu(f4)`) on a name that an earlier
    statement of the same function gave to the same callee or got back from it, and that name was
    not bound again in between. None otherwise."""
    if module_class not in IDEMPOTENT_ACTIVATIONS:
        return None
    statement = statement_at(filename, line)
    tree = parse_file(filename)
    if statement is None or tree is None:
        return None
    function = enclosing_function(tree, statement.lineno)
    if function is tree:
        return None  # a module-level statement: no function whose earlier lines surely ran
    found = [call for call in _single_name_calls(statement)
             if _rectified_before(filename, function, statement, segment(filename, call.func), call.args[0].id)]
    if len(found) != 1:
        return None
    call = found[0]
    callee, name = segment(filename, call.func), call.args[0].id
    new_statement = replace_node_text(filename, statement, call, name)
    if new_statement is None:
        return None
    location = statement_location(filename, statement, role="modified",
                                  note=f"{callee} writes again into {name}, which it already rectified")
    return location, Suggestion(
        f"use {name} as it is: {callee} already rectified it in place earlier in this function, and a "
        f"{module_class} of its own output is the same values, so this call only writes into the tensor "
        "backward needs", new_statement, location)


def _single_name_calls(statement: ast.stmt) -> list[ast.Call]:
    return [node for node in ast.walk(statement) if isinstance(node, ast.Call) and len(node.args) == 1
            and not node.keywords and isinstance(node.args[0], ast.Name)
            and isinstance(node.func, (ast.Name, ast.Attribute))]


def _rectified_before(filename: str, function, statement: ast.stmt, callee: str | None, name: str) -> bool:
    """Whether an earlier statement that surely ran before `statement` (one of the statements of a
    block holding it, not of a branch beside it) is `T = callee(A)` or `callee(A)` with `name`
    being A or T, and `name` is not bound again between them."""
    if callee is None:
        return False
    earlier = [s for block in _blocks_holding(function, statement) for s in block
               if s.end_lineno is not None and s.end_lineno < statement.lineno]
    for candidate in sorted(earlier, key=lambda s: s.lineno, reverse=True):
        if not isinstance(candidate, (ast.Assign, ast.Expr, ast.AugAssign, ast.AnnAssign, ast.Return)):
            continue  # a compound statement's calls may sit in a branch that did not run
        for call in (n for n in ast.walk(candidate) if isinstance(n, ast.Call) and len(n.args) == 1):
            if segment(filename, call.func) != callee:
                continue
            argument = call.args[0].id if isinstance(call.args[0], ast.Name) else None
            targets = [t.id for t in candidate.targets if isinstance(t, ast.Name)] \
                if isinstance(candidate, ast.Assign) and candidate.value is call else []
            if name == argument or name in targets:
                return not _bound_between(function, name, candidate, statement)
    return False


def _blocks_holding(node, statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists, from `node`'s body inwards, that hold `statement` or a statement
    around it."""
    blocks = []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if not isinstance(block, list):
            continue
        for child in block:
            if child.lineno <= statement.lineno <= (child.end_lineno or child.lineno):
                blocks.append(block)
                if child is not statement:
                    blocks.extend(_blocks_holding(child, statement))
    return blocks


def _bound_between(function, name: str, first: ast.stmt, last: ast.stmt) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
               and first.end_lineno < node.lineno < last.lineno for node in ast.walk(function))
