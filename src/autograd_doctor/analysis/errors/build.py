"""Small helpers the families share to build diagnoses and single-statement changes."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import segment, statement_at, statement_location


def diagnosis(code: str, primary: Location | None, related=(), notes=(), help=(), tensor=None) -> Diagnosis:
    return Diagnosis(
        code=code, title=codes.title(code), severity="error", primary=primary,
        related=[loc for loc in related if loc is not None and loc != primary],
        tensor=tensor, notes=list(notes), help=list(help),
    )


def statement_change(location: Location | None, message: str, new_statement: str | None) -> Suggestion:
    """A suggestion that replaces the whole statement at `location` (None: advice only)."""
    if location is None or new_statement is None:
        return Suggestion(message)
    return Suggestion(message, replacement=new_statement, location=location)


def line_change(filename: str, line: int, old: str, new: str, message: str) -> Suggestion | None:
    """Replace `old` by `new` on one physical line (a `with` header, a decorator)."""
    from autograd_doctor.diagnosis.source import source_line

    text = source_line(filename, line)
    if old not in text:
        return None
    code_part = text.split("#")[0].rstrip() if "#" in text else text.rstrip()
    new_text = code_part.strip().replace(old, new, 1)
    location = Location(file=filename, line=line, column=len(text) - len(text.lstrip()), end_line=line,
                        end_column=len(code_part), source=text.strip())
    return Suggestion(message, replacement=new_text, location=location)


def statement_of(filename: str, line: int) -> tuple[ast.stmt, Location] | tuple[None, None]:
    statement = statement_at(filename, line)
    if statement is None:
        return None, None
    return statement, statement_location(filename, statement)


def user_statement(context):
    """(frame, line, filename, statement, location) of the user's statement that raised
    (the innermost user frame of the traceback), or None when there is none or its source
    cannot be read."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if statement is None:
        return None
    return frame, line, filename, statement, location


def text_of(filename: str, node: ast.AST) -> str | None:
    try:
        return segment(filename, node)
    except Exception:
        return None


def find_calls(node: ast.AST, name: str) -> list[ast.Call]:
    """Calls of a function or method named `name` inside `node`, in source order."""
    found = [n for n in ast.walk(node) if isinstance(n, ast.Call)
             and ((isinstance(n.func, ast.Attribute) and n.func.attr == name)
                  or (isinstance(n.func, ast.Name) and n.func.id == name))]
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


def simple_target(statement: ast.stmt) -> str | None:
    """`y` for `y = ...` (a single plain name or attribute target)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
            statement.targets[0], (ast.Name, ast.Attribute)):
        return ast.unparse(statement.targets[0])
    return None
