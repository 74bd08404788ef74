"""AD301 when the loss was computed through a function that turns gradients off inside itself: a
training step that reuses an evaluation helper whose forward runs under `with torch.no_grad():`
(or `torch.set_grad_enabled(False)` as a block). Nothing in the backward's own function cuts the
path; the cut is in the helper, one or more calls away.

The evidence is the run's: the recorder remembers where the user's code entered no_grad blocks
(`recording.switches`), and the loss's assignments in the backward's function lead, through the
functions they call (followed in the source, a few calls deep), to the function that holds the
block. The line to change is the block; the help runs the helper's body with gradients on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.source_scope import Scope, loaded_names
from autograd_doctor.recording import switches
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    parse_file, source_line, statement_location, walk_covering,
)

# Calls followed from the loss's statements into the functions they call.
MAX_CALL_DEPTH = 3
MAX_STATEMENTS = 200


@dataclass
class GradOffBlock:
    """A block with gradients off, entered by the user's code during the run."""

    filename: str
    line: int
    function: str
    decorator: bool
    text: str  # `torch.no_grad()`


@dataclass
class CalledCut:
    block: GradOffBlock
    call: ast.stmt  # the statement in the backward's function that (indirectly) calls it
    path: list[str]  # the functions from that statement to the block's function


def _blocks() -> list[GradOffBlock]:
    found = [GradOffBlock(entry.filename, entry.line, entry.function, entry.decorator, f"torch.{entry.kind}()")
             for kind in ("no_grad", "inference_mode") for entry in switches.mode_entries(kind)]
    for switch in switches.grad_switches():
        if switch.context_manager and not switch.enabled:
            found.append(GradOffBlock(switch.site.filename, switch.site.lineno, switch.site.function, False,
                                      "torch.set_grad_enabled(False)"))
    return found


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                names.add(call.func.id)
            elif isinstance(call.func, ast.Attribute):
                names.add(call.func.attr)
    return names


def _definitions(filenames: set[str]) -> dict[str, list[ast.AST]]:
    found: dict[str, list[ast.AST]] = {}
    for filename in filenames:
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(node.name, []).append(node)
    return found


def _reaches(start: set[str], goal: str, definitions: dict[str, list[ast.AST]]) -> list[str] | None:
    """The chain of function names from one of `start` to `goal`, following calls in the source."""
    frontier = [[name] for name in sorted(start)]
    seen = set(start)
    for _ in range(MAX_CALL_DEPTH):
        following = []
        for path in frontier:
            if path[-1] == goal:
                return path
            for definition in definitions.get(path[-1], []):
                for name in sorted(_called_names(definition) - seen):
                    seen.add(name)
                    following.append(path + [name])
        frontier = following
    return next((path for path in frontier if path[-1] == goal), None)


def _loss_statements(scope: Scope, names: list[str], line: int) -> list[ast.stmt]:
    """The assignments in the backward's function that the names read at `line` come from."""
    work = [(name, line) for name in names]
    seen: set[tuple[str, int]] = set()
    statements = []
    while work and len(seen) < MAX_STATEMENTS:
        name, before = work.pop(0)
        found = scope.latest_assignment(name, before)
        if found is None or (name, found[0].lineno) in seen:
            continue
        seen.add((name, found[0].lineno))
        statement, value = found
        statements.append(statement)
        work.extend((other, statement.lineno) for other in loaded_names(value))
    return statements


def _result_has_history(statement: ast.stmt, frame_locals: dict | None) -> bool:
    """Whether the statement's result, still held by its variable, requires grad (then the path
    is not cut there)."""
    if frame_locals is None or not isinstance(statement, ast.Assign):
        return False
    for target in statement.targets:
        value = frame_locals.get(target.id) if isinstance(target, ast.Name) else None
        if isinstance(value, torch.Tensor) and value.requires_grad:
            return True
    return False


def find_called_cut(filename: str, backward_statement: ast.stmt, names: list[str],
                    frame_locals: dict | None = None) -> CalledCut | None:
    """The grad-off block, in a function the loss's statements call, that cut the path."""
    blocks = _blocks()
    if not blocks:
        return None
    scope = Scope(filename, backward_statement.lineno)
    if scope.tree is None:
        return None
    own = getattr(scope.node, "name", None)
    statements = [backward_statement, *_loss_statements(scope, names, backward_statement.lineno)]
    definitions = _definitions({filename, *(block.filename for block in blocks)})
    for statement in statements:
        if _result_has_history(statement, frame_locals):
            continue
        called = _called_names(statement)
        for block in blocks:
            if block.function == own and block.filename == filename:
                continue  # a block in the backward's own function: the statement search sees it
            path = _reaches(called, block.function, definitions)
            if path is not None:
                return CalledCut(block, statement, path)
    return None


def _with_statement(filename: str, line: int) -> ast.With | None:
    tree = parse_file(filename)
    for node in walk_covering(tree, line) if tree is not None else ():
        if isinstance(node, ast.With) and node.lineno == line:
            return node
    return None


def _body_instead(filename: str, block: ast.With) -> str | None:
    """The with statement's body, at the with's indentation (the block without its header)."""
    if len(block.items) != 1 or block.items[0].optional_vars is not None:
        return None
    lines = [source_line(filename, n) for n in range(block.body[0].lineno, block.end_lineno + 1)]
    indent = block.body[0].col_offset
    if any(line.strip() and len(line) - len(line.lstrip()) < indent for line in lines):
        return None
    return "\n".join(line[indent:].rstrip() for line in lines)


def called_cut_parts(cut: CalledCut, filename: str, loss_name: str) -> tuple[Location, list[Location], list[str],
                                                                             list[Suggestion]]:
    """(primary, related, notes, helps) for a path cut in a called function's grad-off block."""
    block = cut.block
    function = block.function
    chain = " -> ".join(f"{name}()" for name in cut.path)
    statement = _with_statement(block.filename, block.line) if not block.decorator else None
    if statement is not None:
        primary = statement_location(block.filename, statement, role="cut",
                                     note=f"gradients are off in this block of {function}(), so what it returns has "
                                          "no grad history")
        primary.end_line, primary.end_column = primary.line, None
    else:
        primary = Location(block.filename, block.line, None, role="cut",
                           note=f"{function}() runs with gradients off ({block.text})")
    call = statement_location(filename, cut.call, role="called from",
                              note=f"{loss_name} is computed through {chain} here")
    notes = [f"{loss_name} has no grad_fn: it is computed through {chain}, which ran {block.text}; inside it "
             "autograd records nothing, so the training step gets a result without grad history"]
    helps = []
    body = _body_instead(block.filename, statement) if statement is not None else None
    if body is not None:
        helps.append(Suggestion(
            f"run {function}() with gradients on: it is part of the training step here (keep {block.text} for "
            "code that only evaluates, in the evaluation loop)", body, statement_location(block.filename, statement)))
    else:
        helps.append(Suggestion(f"run {function}() with gradients on when the training step calls it: remove "
                                f"{block.text} from it and use it only where the code only evaluates"))
    return primary, [call], notes, helps
