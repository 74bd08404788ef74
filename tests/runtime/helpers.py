"""Run small buggy programs for real and look at what the doctor says about them.

Programs mark their interesting lines with comments: `# WRITE`, `# SAVE`, `# BACKWARD`,
`# DEFINE`, `# CREATE`, so tests assert line numbers without hard-coding them.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import textwrap

import torch

import autograd_doctor
from autograd_doctor.analysis.fixes import apply_replacement

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def marked_line(source: str, marker: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if f"# {marker}" in line:
            return number
    raise AssertionError(f"no line marked {marker}")


class Outcome:
    def __init__(self, error, diagnoses, namespace, path, source, warnings=()):
        self.error = error
        self.diagnoses = diagnoses
        self.namespace = namespace
        self.path = path
        self.source = source
        self.warnings = list(warnings)

    @property
    def diagnosis(self):
        assert self.diagnoses, f"no diagnosis; error was {self.error!r}"
        return self.diagnoses[0]

    def line(self, marker: str) -> int:
        return marked_line(self.source, marker)


def write_program(tmp_path, source: str, name: str = "program.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def run_program(tmp_path, source: str, name: str = "program.py", **watch_options) -> Outcome:
    """Run `source` as a file under watch(); collect the error and the diagnoses. The program's
    exception is caught inside the watched block: an error torch raises is explained where it is
    raised, but one raised in the program's own code (a None `.grad` read: AD309) is explained
    only when it leaves the block (watch().__exit__, the pytest plugin): use run_as_script for
    those (tests/runtime/test_front_end_parity.py)."""
    import warnings as warnings_module

    source = textwrap.dedent(source)
    path = write_program(tmp_path, source, name)
    error = None
    namespace = {}
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always")
        with autograd_doctor.watch(**watch_options) as doctor:
            try:
                namespace = runpy.run_path(path, run_name="__main__")
            except Exception as problem:  # the program's own failure is what we study
                error = problem
    diagnoses = autograd_doctor.diagnoses_of(error) if error is not None else []
    for diagnosis in doctor.diagnoses:
        if diagnosis not in diagnoses:
            diagnoses.append(diagnosis)
    doctor_warnings = [w for w in caught if issubclass(w.category, autograd_doctor.AutogradDoctorWarning)]
    return Outcome(error, diagnoses, namespace, path, source, doctor_warnings)


def run_as_script(tmp_path, source: str) -> Outcome:
    """Run `source` under watch() as a script does: the exception leaves the watched block
    (so watch().__exit__ explains it), unlike run_program, which catches it inside."""
    source = textwrap.dedent(source)
    path = write_program(tmp_path, source)
    error = None
    try:
        with autograd_doctor.watch():
            runpy.run_path(path, run_name="__main__")
    except Exception as problem:  # the program's own failure is what we study
        error = problem
    return Outcome(error, autograd_doctor.diagnoses_of(error) if error else [], {}, path, source)


def run_plain(tmp_path, source: str, name: str = "fixed.py") -> dict:
    """Run `source` without the doctor; return its globals (raises on failure)."""
    path = write_program(tmp_path, source, name)
    return runpy.run_path(path, run_name="__main__")


def apply_help(outcome: Outcome, index: int = 0) -> str:
    suggestion = outcome.diagnosis.help[index]
    assert suggestion.replacement, suggestion.message
    return apply_replacement(outcome.source, suggestion.location, suggestion.replacement)


def run_cli(*args: str, cwd: str | None = None, env: dict | None = None, input: str | None = None, timeout: int = 120):
    command = [sys.executable, "-m", "autograd_doctor", *args]
    merged = dict(os.environ)
    merged.update(env or {})
    return subprocess.run(command, cwd=cwd, env=merged, input=input, capture_output=True, text=True, timeout=timeout)


def grads_equal(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))
