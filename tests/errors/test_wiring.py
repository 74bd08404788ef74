"""The catalogue reaches the user through every entry point, and never gets in the way."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import marked_line, program_source, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402
from autograd_doctor.analysis import errors as catalogue  # noqa: E402
from autograd_doctor.recording import switches  # noqa: E402

pytest_plugins = ["pytester"]


def test_run_command_prints_and_writes_the_catalogue_diagnosis(tmp_path):
    source = program_source("inference_saved_decorator")
    path = write(tmp_path, source, "program")
    report = tmp_path / "report.json"
    result = subprocess.run([sys.executable, "-m", "autograd_doctor", "run", "--json", str(report), path],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 1
    assert "RuntimeError: Inference tensors cannot be saved for backward" in result.stderr
    assert "error[AD109]" in result.stderr
    assert "@torch.no_grad()" in result.stderr  # the suggested line
    data = json.loads(report.read_text())
    diagnosis = next(d for d in data["diagnoses"] if d["code"] == "AD109")
    assert diagnosis["primary"]["line"] == marked_line(source, "PRIMARY")
    assert diagnosis["help"][0] == "features = embed(torch.randn(8, 4)).clone()"  # the call site first
    assert "@torch.no_grad()" in diagnosis["help"]


def test_pytest_plugin_reports_the_catalogue_diagnosis(pytester):
    pytester.makepyfile(test_numpy="""
        import torch

        def test_converts():
            x = torch.randn(3, requires_grad=True)
            values = torch.sigmoid(x).numpy()
    """)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "error[AD113]" in output
    assert "values = torch.sigmoid(x).detach().numpy()" in output


@pytest.mark.internal_error  # the catalogue made to fail on purpose
def test_a_failing_catalogue_leaves_the_users_exception_unchanged(tmp_path, monkeypatch):
    def broken(context, already):
        raise ValueError("a bug in the doctor")

    monkeypatch.setattr(catalogue, "MATCHERS", [(pattern, broken) for pattern, _ in catalogue.MATCHERS])
    monkeypatch.delenv("AUTOGRAD_DOCTOR_DEBUG", raising=False)
    path = write(tmp_path, program_source("numpy_requires_grad"), "program")
    plain_error, _ = run_plain(path)
    error = run_watched(path)
    assert type(error) is type(plain_error) and str(error) == str(plain_error)
    assert autograd_doctor.diagnoses_of(error) == []
    assert not getattr(error, "__notes__", None)


def test_inference_mode_bookkeeping_is_on_only_while_watching():
    original = torch.inference_mode.__enter__
    with autograd_doctor.watch():
        assert torch.inference_mode.__enter__ is not original
    assert torch.inference_mode.__enter__ is original
    assert torch.no_grad.__enter__ is not None


def test_only_the_users_own_blocks_are_remembered():
    switches.forget_mode_entries()
    with autograd_doctor.watch():
        torch.nn.Linear(3, 3)  # nn.init runs under torch.no_grad() inside torch
        with torch.no_grad():
            torch.ones(1)
        line = sys._getframe().f_lineno - 2
    entries = switches.mode_entries("no_grad")
    assert [(e.filename, e.line, e.decorator) for e in entries] == [(__file__, line, False)]
    switches.forget_mode_entries()


def test_ipython_cell_shows_the_catalogue_diagnosis(capsys):
    import re

    import pytest

    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("import torch")
    shell.run_line_magic("load_ext", "autograd_doctor")
    try:
        result = shell.run_cell("x = torch.randn(3, requires_grad=True)\nvalues = torch.sigmoid(x).numpy()")
    finally:
        shell.run_line_magic("unload_ext", "autograd_doctor")
    output = re.sub(r"\x1b\[[0-9;]*m", "", "".join(capsys.readouterr()))
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "Can't call numpy() on Tensor that requires grad" in output
    assert "error[AD113]" in output
    assert "values = torch.sigmoid(x).detach().numpy()" in output
