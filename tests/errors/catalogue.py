"""Running the catalogue's programs (tests/errors/programs) with and without the doctor."""

from __future__ import annotations

import os
import runpy

import autograd_doctor
from autograd_doctor.analysis.fixes import apply_replacement

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def program_source(name: str) -> str:
    with open(os.path.join(PROGRAMS, f"{name}.py"), encoding="utf-8") as stream:
        return stream.read()


def marked_line(source: str, marker: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return number
    raise AssertionError(f"no line marked {marker}")


def write(tmp_path, source: str, name: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return str(path)


def run_plain(path: str):
    """(exception or None, globals) of the program run without the doctor."""
    namespace = {}
    try:
        namespace = runpy.run_path(path, run_name="__main__")
    except Exception as problem:  # the program's own failure is what we compare
        return problem, namespace
    return None, namespace


def run_watched(path: str):
    """The program's exception, raised through watch() as in a user's script."""
    try:
        with autograd_doctor.watch():
            runpy.run_path(path, run_name="__main__")
    except Exception as problem:  # the program's own failure is what we study
        return problem
    return None


def apply_suggestion(source: str, suggestion) -> str:
    """The program with the suggestion applied: its replacement, or (a deletion) its line removed."""
    if suggestion.replacement:
        return apply_replacement(source, suggestion.location, suggestion.replacement)
    lines = source.splitlines(keepends=True)
    del lines[suggestion.location.line - 1]
    return "".join(lines)
