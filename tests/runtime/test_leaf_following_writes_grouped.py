"""AD102's `torch.no_grad()` help takes with it the writes into the same tensor that follow the
failing one (`w[:, i] -= a` then `w[:, i] += b`: the next would fail the same way), but only those
shown to write values without gradient. A later write of a value that carries one
(`weights[1] -= 0.1 * penalty`, `penalty` computed by a module) is part of the computation:
torch.no_grad() around it would stop the module from training (set 28 part B's note). Then the help
wraps the first write alone; the second, when the program is run again, is judged on its own."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

CONSTANT_THEN_GRADIENT = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    encoder = nn.Linear(3, 2)
    weights = torch.ones(2, requires_grad=True)
    x = torch.randn(4, 3)
    penalty = encoder(x).pow(2).mean()
    weights[0] = 0.5  # WRITE
    weights[1] -= 0.1 * penalty  # SECOND
"""

CONSTANTS_ONLY = """
    import torch

    torch.manual_seed(0)
    table = torch.zeros(3, 4, requires_grad=True)
    scale = [0.5, 2.0]
    offset = torch.randn(4)
    for i in range(2):
        table[i] += offset * scale[i]  # WRITE
        table[i] -= 1.0  # SECOND
    result = table.detach().clone()
"""


def test_a_following_write_of_a_value_with_gradient_is_left_out(tmp_path):
    outcome = run_program(tmp_path, CONSTANT_THEN_GRADIENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    first = diagnosis.help[0]
    assert first.replacement == "with torch.no_grad():\n    weights[0] = 0.5"
    assert "that follow" not in first.message


def test_following_writes_of_values_without_gradient_are_taken_along_and_the_help_runs(tmp_path):
    outcome = run_program(tmp_path, CONSTANTS_ONLY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    first = diagnosis.help[0]
    assert first.replacement.startswith("with torch.no_grad():\n")
    assert "table[i] -= 1.0" in first.replacement and "that follow" in first.message
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    expected = torch.zeros(3, 4)
    offset = fixed["offset"]
    for i, scale in enumerate((0.5, 2.0)):
        expected[i] += offset * scale
        expected[i] -= 1.0
    assert torch.equal(fixed["result"], expected)
