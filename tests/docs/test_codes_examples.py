"""Each code's "Minimal example" (docs/codes.md, `autograd-doctor explain CODE`) gets that
code when it runs, as rustc tests the example of every error explanation.

The examples are fragments that name what they are about (`model`, `x`, `batches`); the
registry (autograd_doctor/diagnosis/codes.py) holds, beside each code's explanation, the
lines a reader would supply (rustc's hidden lines), kept out of the docs, and the class
around a fragment of a custom autograd.Function's method.
"""

from __future__ import annotations

import runpy
import warnings

import pytest

import autograd_doctor
from autograd_doctor.diagnosis import codes


@pytest.mark.parametrize("code", sorted(codes.TITLES))
def test_the_minimal_example_gets_its_code(tmp_path, code):
    entry = codes.REGISTRY[code]
    if entry.example_not_runnable:
        pytest.skip(entry.example_not_runnable)
    path = tmp_path / f"{code.lower()}_example.py"
    path.write_text(entry.example_program())
    found = set()
    error = None
    watcher = autograd_doctor.watch(**entry.example_watch)
    doctor = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with watcher as doctor:  # the error passes through watch(), as in a user's script
                runpy.run_path(str(path), run_name="__main__")
        except Exception as problem:  # the example's own failure is what it shows
            error = problem
            found |= {d.code for d in autograd_doctor.diagnoses_of(problem)}
    found |= {d.code for d in doctor.diagnoses}
    assert code in found, f"{code}: got {sorted(found)} ({error!r})\n{path.read_text()}"


def test_the_examples_that_do_not_run_are_few_and_said_why():
    assert len([entry for entry in codes.REGISTRY.values() if entry.example_not_runnable]) <= 2


def test_every_code_has_a_minimal_example():
    for entry in codes.REGISTRY.values():
        assert entry.minimal_example().strip(), entry.code
