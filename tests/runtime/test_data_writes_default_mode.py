"""AD201 in the default (light) mode: a write through `.data` into a tensor the graph saved
earlier is found as backward starts (the write log remembers `.data` writes; the graph is
probed only after one), with the same diagnosis and help as the full mode gives."""

from __future__ import annotations

import pytest

import autograd_doctor.recording.recorder as recorder_module

# The default mode's `.data` check is off (recording/recorder.py, DEFAULT_MODE_DATA_CHECK): it
# compared byte ranges and warned on correct code. These tests are kept for when it decides on
# elements and values; the full mode's AD201 is tested in test_silent_problems.py.
pytestmark = pytest.mark.skipif(not recorder_module.DEFAULT_MODE_DATA_CHECK,
                                reason="the default mode's .data check is off (false alarms on correct code)")
import torch

from helpers import apply_help, run_plain, run_program

SETITEM = """
    import torch
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = torch.sigmoid(x)  # SAVE
    y.data[0] = 0.0  # WRITE
    y.sum().backward()  # BACKWARD
"""


@pytest.mark.parametrize("mode", ["light", "full"])
def test_data_write_into_a_saved_output_is_found_in_both_modes(tmp_path, mode):
    outcome = run_program(tmp_path, SETITEM, mode=mode)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD201"]
    assert diagnosis.severity == "warning" and diagnosis.primary.line == outcome.line("WRITE")
    assert outcome.line("BACKWARD") in {loc.line for loc in diagnosis.related}
    assert diagnosis.help[0].replacement == "y = y.index_fill(0, torch.tensor([0]), 0.0)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    s = torch.sigmoid(torch.tensor([0.5, 1.0, 2.0]))
    expected = s * (1 - s)
    expected[0] = 0.0
    assert torch.allclose(namespace["x"].grad, expected)


def test_data_write_into_a_saved_input_in_a_loop_is_reported_once(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        for step in range(3):
            h = w.exp()
            y = (h * h).sum()
            h.data.mul_(2)  # WRITE
            y.backward()
    """)
    assert [d.code for d in outcome.diagnoses] == ["AD201"]
    assert outcome.diagnoses[0].primary.line == outcome.line("WRITE")
    assert len(outcome.warnings) == 1


def test_data_write_raises_when_asked(tmp_path):
    outcome = run_program(tmp_path, SETITEM, silent="raise")
    assert outcome.error is not None and outcome.diagnosis.code == "AD201"


@pytest.mark.parametrize("body", [
    # written before the save: the graph saved the new values
    "v = torch.ones(4)\nv.data.mul_(2)\ny = (w * v).sum()\ny.backward()\n",
    # written after backward used it: nothing left to corrupt
    "h = w.exp()\ny = (h * h).sum()\ny.backward()\nh.data.mul_(2)\n(w * 2).sum().backward()\n",
    # a part of the memory that was not saved
    "h = w * 2\ny = (h[:2] * h[:2]).sum()\nh.data[3] = 0.0\ny.backward()\n",
    # the usual .data update of a parameter between two iterations
    "for _ in range(2):\n    loss = (w * w).sum()\n    loss.backward()\n    w.data -= 0.1 * w.grad\n    w.grad = None\n",
])
def test_data_writes_that_change_nothing_saved_are_not_reported(tmp_path, body):
    outcome = run_program(tmp_path, "import torch\nw = torch.randn(4, requires_grad=True)\n" + body)
    assert outcome.error is None
    assert outcome.diagnoses == []
