"""The linter says the same thing on every run: string hashes (and so the order of sets of names)
change with PYTHONHASHSEED, and a finding once named whichever module of a set came first
(r301: `self.models["decoder"]` in one run, `self.models["encoder"]` in the next)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _start_lint(seed: str) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.Popen(
        [sys.executable, "-m", "autograd_doctor", "lint", "--format", "concise", "--exit-zero",
         str(HERE / "recreations"), str(HERE / "fixtures")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def _output(run: subprocess.Popen) -> str:
    try:
        stdout, stderr = run.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        run.kill()
        raise
    assert run.returncode == 0, stderr
    return stdout


def test_findings_do_not_depend_on_the_hash_seed():
    # Both runs at once: each lints some 600 files, minutes one after the other on a CI machine.
    runs = [_start_lint("1"), _start_lint("7")]
    first, second = (_output(run) for run in runs)
    assert first.count("ADL") > 100  # the re-creations' findings, not an empty run
    assert second == first
