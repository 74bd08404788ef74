"""The doctor's analysis modules import on their own, first (stop 43: analysis.errors.requires_grad
imported stale_optimizer at its top while stale_optimizer imports analysis.errors, so importing
stale_optimizer or analysis.diagnose before analysis.errors raised ImportError on the cycle: an
error of ours wherever a check's lazy import came first, swallowed as an internal error)."""

import os
import subprocess
import sys

import pytest

import autograd_doctor

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(autograd_doctor.__file__)))


@pytest.mark.parametrize("module", [
    "autograd_doctor.analysis.stale_optimizer",
    "autograd_doctor.analysis.diagnose",
    "autograd_doctor.analysis.errors.requires_grad",
    "autograd_doctor.analysis.masked_nan",
])
def test_module_imports_first_without_a_cycle(module):
    environment = dict(os.environ, PYTHONPATH=SOURCE)
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                          env=environment, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
