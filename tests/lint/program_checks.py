"""What the lint tests on small programs share: a program's text, the program run as a module
(to show under torch that the hazard is real, or that the near twin runs), and the line of a
statement. Imported as `program_checks`: pytest puts tests/lint/ on sys.path."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType


def program_source(folder: Path, name: str) -> str:
    """The text of `<folder>/<name>.py`."""
    return (folder / (name + ".py")).read_text(encoding="utf-8")


def run_as_module(source: str, name: str) -> ModuleType:
    """The program executed as a fresh module named `name` (its top level runs)."""
    module = ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def line_starting(source: str, text: str) -> int:
    """The number of the first line whose code starts with `text`."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip().startswith(text))


def line_containing(source: str, text: str) -> int:
    """The number of the first line that contains `text`."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)
