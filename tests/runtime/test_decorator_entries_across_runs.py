"""The `@torch.no_grad()` entries the doctor records are kept across sessions (a notebook runs each
cell in its own session), and they are found by the decorated function's name. An entry another
program left in this process, for a function of the same name in a file this program does not use,
is not this program's: AD307 must name this program's own decorator. An entry of an earlier session
in a file this program does use (a notebook's earlier cell) still counts."""

from __future__ import annotations

import runpy
import textwrap

import torch

import autograd_doctor

FIRST_PROGRAM = """
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 1)

    @torch.no_grad()
    def score(self, items):
        return self.body(items).sum()


Ranker().score(torch.randn(4, 3)).backward()
"""

LIBRARY = """
import functools

import torch


def untracked(function):
    @functools.wraps(function)
    def run(*args, **kwargs):
        with torch.no_grad():
            return function(*args, **kwargs)
    return run
"""

SECOND_PROGRAM = """
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from lib_untracked_across_runs import untracked

w = torch.tensor([1.0, 2.0], requires_grad=True)


@untracked  # DECORATOR
def score(x):
    return (w * x).sum()


score(torch.tensor([3.0, 4.0])).backward()
"""


def _diagnoses(path):
    try:
        with autograd_doctor.watch():
            runpy.run_path(str(path), run_name="__main__")
    except RuntimeError as error:
        return autograd_doctor.diagnoses_of(error)
    raise AssertionError("the program was expected to fail")


def _line(source: str, mark: str) -> int:
    return next(n for n, text in enumerate(source.splitlines(), 1) if mark in text)


def test_an_entry_left_by_another_program_does_not_take_this_programs_place(tmp_path, monkeypatch):
    first = tmp_path / "first" / "program.py"
    first.parent.mkdir()
    first.write_text(FIRST_PROGRAM)
    assert "AD307" in [d.code for d in _diagnoses(first)]  # its own decorator, recorded

    second_dir = tmp_path / "second"
    second_dir.mkdir()
    (second_dir / "lib_untracked_across_runs.py").write_text(textwrap.dedent(LIBRARY))
    second = second_dir / "program.py"
    second.write_text(SECOND_PROGRAM)
    monkeypatch.delitem(__import__("sys").modules, "lib_untracked_across_runs", raising=False)
    try:
        diagnoses = _diagnoses(second)
    finally:
        __import__("sys").modules.pop("lib_untracked_across_runs", None)
    (found,) = [d for d in diagnoses if d.code == "AD307"]
    assert (found.primary.file, found.primary.line) == (str(second), _line(SECOND_PROGRAM, "# DECORATOR"))


CELL_ONE = """
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 1)

    @torch.no_grad()
    def score(self, items):
        return self.body(items).sum()


ranker = Ranker()
ranker.score(torch.randn(4, 3))
"""

CELL_TWO = """
ranker.score(torch.randn(4, 3)).backward()
"""


def test_a_function_of_an_earlier_cell_is_named_in_a_later_one(tmp_path):
    """Each cell its own session, as in a notebook: the decorator of a method defined in the first
    cell (a file of its own) and called again in the second is still the one named."""
    namespace: dict = {"__name__": "__main__"}
    diagnoses = None
    for name, source in (("cell_one.py", CELL_ONE), ("cell_two.py", CELL_TWO)):
        path = tmp_path / name
        path.write_text(source)
        try:
            with autograd_doctor.watch():
                exec(compile(source, str(path), "exec"), namespace)
        except RuntimeError as error:
            diagnoses = autograd_doctor.diagnoses_of(error)
    assert diagnoses is not None, "the second cell was expected to fail"
    (found,) = [d for d in diagnoses if d.code == "AD307"]
    assert (found.primary.file, found.primary.line) == (str(tmp_path / "cell_one.py"), _line(CELL_ONE, "no_grad"))
    assert torch.is_grad_enabled()
