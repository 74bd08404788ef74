"""The automatic second run (`autograd-doctor run` re-runs a failure under the full mode
to find the save line) is bounded by what the user will wait, and when it is skipped or
cut the report says how to get the save line."""

import time

import pytest

from autograd_doctor.cli import rerun
from helpers import run_cli, write_program

# Fails like BUGGY_SCRIPT in test_modes.py, after sleeping: the first run (no marker file
# yet) sleeps FIRST_SLEEP seconds, every later run (the second run) SECOND_SLEEP seconds.
SLEEPY_SCRIPT = """
import os, sys, time
import torch
marker = sys.argv[1]
again = os.path.exists(marker)
open(marker, "w").close()
time.sleep(float(sys.argv[3] if again else sys.argv[2]))
a = torch.ones(3, requires_grad=True)
b = a.sigmoid()
b[1] = 2
b.sum().backward()
"""


@pytest.fixture(autouse=True)
def no_limit_variables(monkeypatch):
    monkeypatch.delenv(rerun.LIMIT_VARIABLE, raising=False)
    monkeypatch.delenv("AUTOGRAD_DOCTOR_MODE", raising=False)


def test_default_limit_is_the_smaller_of_a_minute_and_twice_the_first_run():
    assert rerun.rerun_limit(20.0) == 40.0
    assert rerun.rerun_limit(45.0) == 60.0
    assert rerun.rerun_limit(7200.0) == 60.0
    assert rerun.rerun_limit(0.5) == rerun.MIN_RERUN_S  # interpreter start-up varies by seconds


def test_limit_from_the_option_then_the_environment(monkeypatch):
    monkeypatch.setenv(rerun.LIMIT_VARIABLE, "300")
    assert rerun.rerun_limit(7200.0) == 300.0
    assert rerun.rerun_limit(7200.0, configured_s=5.0) == 5.0  # the option wins
    monkeypatch.setenv(rerun.LIMIT_VARIABLE, "soon")
    assert rerun.rerun_limit(20.0) == 40.0  # unreadable: ignored, with a one-line warning


def test_bad_limit_is_a_clear_one_line_error(tmp_path):
    script = write_program(tmp_path, "print('never runs')\n", "program.py")
    for value in ("soon", "-3", "nan"):
        result = run_cli("run", "--rerun-limit", value, script)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            f"autograd-doctor run: error: --rerun-limit: the re-run limit must be a number of seconds"
            f"{' (0 or more)' if value != 'soon' else ''}, not {value!r}"]
        assert "never runs" not in result.stdout


def test_first_run_longer_than_the_limit_is_not_run_again(tmp_path):
    script = write_program(tmp_path, SLEEPY_SCRIPT, "sleepy.py")
    marker = str(tmp_path / "ran")
    result = run_cli("run", "--rerun-limit", "1", script, marker, "1.5", "0")
    assert result.returncode == 1
    assert "running the program again" not in result.stderr
    assert "autograd-doctor did not run the program again: the program took" in result.stderr
    assert "more than the 1 s a second run may take (--rerun-limit or AUTOGRAD_DOCTOR_RERUN_LIMIT" in result.stderr
    assert "run the program under the full mode from the start (`autograd-doctor run --full`" in result.stderr
    assert "modified here: version 0 -> 1" in result.stderr  # the light report stands
    assert "saved here" not in result.stderr


def test_limit_zero_turns_the_second_run_off(tmp_path):
    script = write_program(tmp_path, SLEEPY_SCRIPT, "sleepy.py")
    result = run_cli("run", script, str(tmp_path / "ran"), "0", "0", env={rerun.LIMIT_VARIABLE: "0"})
    assert result.returncode == 1
    assert "running the program again" not in result.stderr
    assert "the second run is turned off (a limit of 0 s)" in result.stderr
    assert "`autograd-doctor run --full`" in result.stderr


def test_second_run_is_stopped_at_the_limit(tmp_path):
    script = write_program(tmp_path, SLEEPY_SCRIPT, "sleepy.py")
    started = time.monotonic()
    # The first run does not sleep; the second sleeps far past the limit.
    result = run_cli("run", script, str(tmp_path / "ran"), "0", "600", env={rerun.LIMIT_VARIABLE: "25"})
    assert time.monotonic() - started < 120
    assert result.returncode == 1
    assert "running the program again under the full mode to find where the tensor was saved (at most 25 s" \
        in result.stderr
    assert "but the second run was stopped at its time limit (25 s)" in result.stderr
    assert "`autograd-doctor run --full`" in result.stderr
    assert "saved here" not in result.stderr


def test_second_run_within_the_limit_still_names_the_save(tmp_path):
    script = write_program(tmp_path, SLEEPY_SCRIPT, "sleepy.py")
    result = run_cli("run", script, str(tmp_path / "ran"), "0", "0", env={rerun.LIMIT_VARIABLE: "300"})
    assert result.returncode == 1
    assert "saved here: sigmoid keeps its output" in result.stderr
    assert "ran the program a second time under the full mode" in result.stderr
