"""Golden reports: the complete printed report (and its JSON) of every catalogue program, re-created
bug report, silent bug (tests/silent) and lint fixture, compared with the files saved in tests/golden/.

A change of wording or layout shows up here as a diff. When the change is meant, regenerate and
review the diff as with any other change:

    python -m pytest tests/golden --update-goldens
    git diff tests/golden
"""

from __future__ import annotations

import io
import json
import os
import re
import runpy
import shutil
import warnings
from contextlib import redirect_stdout

import pytest

import autograd_doctor
from autograd_doctor.diagnosis.model import Report
from autograd_doctor.report.text import render_report

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(TESTS)
GOLDEN = os.path.join(TESTS, "golden")

# AD127 needs a process group; tests/errors/test_ddp.py runs it under torchrun.
NEEDS_A_LAUNCHER = {"ddp_unused_parameters"}


def _programs(folder: str) -> list[str]:
    directory = os.path.join(TESTS, folder, "programs")
    names = sorted(name[:-3] for name in os.listdir(directory) if name.endswith(".py"))
    return [name for name in names if name not in NEEDS_A_LAUNCHER]


CATALOGUE = _programs("errors")
BUG_REPORTS = _programs("bug_reports")
LINT_FIXTURES = sorted(
    os.path.join(folder, name)
    for folder in ("rules", "fix")
    for name in os.listdir(os.path.join(TESTS, "lint", "fixtures", folder))
    if name.endswith(".py"))

# Memory addresses and object ids differ from run to run; nothing else in a report may.
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def _normalise(text: str, *paths: str) -> str:
    """The report with the folders that differ between checkouts (the temporary directory, the
    repository itself: the test helper that runs a program is a frame of the stack) named."""
    text = text.replace(REPOSITORY, "<repository>")
    for path in paths:
        text = text.replace(path, "<dir>")
    return _ADDRESS.sub("0x<address>", text)


def _compare(request, relative_path: str, actual: str) -> None:
    path = os.path.join(GOLDEN, relative_path)
    if request.config.getoption("--update-goldens"):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(actual)
        return
    if not os.path.exists(path):
        pytest.fail(f"no golden file {relative_path}: run pytest tests/golden --update-goldens and review it")
    with open(path, encoding="utf-8") as stream:
        expected = stream.read()
    assert actual == expected, f"{relative_path} changed; if meant, regenerate with --update-goldens and review the diff"


def _run_as_a_user_would(path: str, mode: str):
    """The program under watch(), its exception leaving the with block as in a user's script
    (the error catalogue explains it there); (error, diagnoses, doctor warnings)."""
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with autograd_doctor.watch(mode=mode) as doctor:
                runpy.run_path(path, run_name="__main__")
        except Exception as problem:  # the program's own failure is what is reported
            error = problem
    diagnoses = autograd_doctor.diagnoses_of(error) if error is not None else []
    diagnoses += [d for d in doctor.diagnoses if d not in diagnoses]
    found = [w for w in caught if issubclass(w.category, autograd_doctor.AutogradDoctorWarning)]
    return error, diagnoses, found


def _report_texts(tmp_path, folder: str, name: str, mode: str) -> tuple[str, str]:
    path = tmp_path / f"{name}.py"
    shutil.copy(os.path.join(TESTS, folder, "programs", f"{name}.py"), path)
    error, diagnoses, found_warnings = _run_as_a_user_would(str(path), mode)
    lines = [f"exception: {type(error).__name__}: {error}" if error is not None else "exception: none"]
    lines.append(render_report(diagnoses) if diagnoses else "(no diagnosis)")
    for warning in found_warnings:
        lines.append(f"warning: {warning.message}")
    text = _normalise("\n".join(lines) + "\n", str(tmp_path))
    report = Report(diagnoses=diagnoses,
                    exception_type=type(error).__name__ if error is not None else None,
                    exception_message=str(error) if error is not None else None)
    as_json = _normalise(json.dumps(report.to_dict(), indent=2, default=str) + "\n", str(tmp_path))
    return text, as_json


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_report(request, tmp_path, name, mode):
    text, as_json = _report_texts(tmp_path, "errors", name, mode)
    _compare(request, f"catalogue/{name}.{mode}.txt", text)
    _compare(request, f"catalogue/{name}.{mode}.json", as_json)


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", BUG_REPORTS)
def test_bug_report_report(request, tmp_path, name, mode):
    text, as_json = _report_texts(tmp_path, "bug_reports", name, mode)
    _compare(request, f"bug_reports/{name}.{mode}.txt", text)
    _compare(request, f"bug_reports/{name}.{mode}.json", as_json)


# Below the runner above: its line, shown as "called from here" in some reports, stays put.
SILENT = _programs("silent")


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", SILENT)
def test_silent_bug_report(request, tmp_path, name, mode):
    text, as_json = _report_texts(tmp_path, "silent", name, mode)
    _compare(request, f"silent/{name}.{mode}.txt", text)
    _compare(request, f"silent/{name}.{mode}.json", as_json)


@pytest.mark.parametrize("output_format", ["text", "json"])
@pytest.mark.parametrize("fixture", LINT_FIXTURES)
def test_lint_fixture_output(request, fixture, output_format):
    from autograd_doctor.lint.cli import lint_main

    fixtures = os.path.join(TESTS, "lint", "fixtures")
    printed = io.StringIO()
    with redirect_stdout(printed):
        lint_main([os.path.join(fixtures, fixture), "--isolated", "--select", "ADL",
                   "--format", output_format])
    extension = "txt" if output_format == "text" else "json"
    _compare(request, f"lint/{fixture[:-3]}.{extension}", _normalise(printed.getvalue(), fixtures))
