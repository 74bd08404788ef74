"""AD201 in the default (light) mode: a write through `.data` into a tensor the graph saved
earlier is found as backward starts (the write log remembers `.data` writes; the graph is
probed only after one), with the same diagnosis and help as the full mode gives. It decides on
the elements written and saved (strides, not byte ranges) and on their values at backward (a
value put back is not reported; tests/runtime/test_false_alarm_patterns.py holds the correct
programs that once drew false alarms)."""

from __future__ import annotations

import pytest

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


def test_default_mode_decides_on_elements_and_on_values_put_back(tmp_path):
    # Every other row of a buffer is saved by a mul; `.data` writes go to the rows between
    # (no element shared, though the byte ranges interleave) and to a saved row whose value is
    # put back before backward: nothing to report. A write into a saved row that stays is.
    source = """
        import torch
        torch.manual_seed(0)
        rows = torch.randn(6, 3)
        scale = torch.randn(3, requires_grad=True)
        even = rows[::2] * scale  # SAVE
        rows.data[1::2] = 0.0
        kept = rows.data[2].clone()
        rows.data[2] = 7.0
        rows.data[2] = kept
        even.sum().backward()
        grads = [scale.grad]
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
    assert torch.equal(outcome.namespace["grads"][0], run_plain(tmp_path, source)["grads"][0])
    buggy = source.replace("rows.data[2] = 7.0\n        rows.data[2] = kept", "rows.data[2] = 7.0  # WRITE")
    outcome = run_program(tmp_path, buggy)
    assert [d.code for d in outcome.diagnoses] == ["AD201"]
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")
    assert len(outcome.warnings) == 1
