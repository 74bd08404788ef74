"""Held-out set 42's causes (docs/bug-reports.md, "Set 42"). The other shapes below were written
before the changes were run on them.

- AD305, torch.autograd.grad whose only inputs are computed tensors (a view `t[-1, 0]`, a reshape)
  that the output never reached (pytorch#125532, an ODE solved on NumPy arrays and wrapped in new
  tensors): a zero gradient (materialize_grads=True) would run and answer nothing that was asked,
  so it is no longer offered, as it was not for leaf inputs."""

from __future__ import annotations

import os

import torch

from helpers import run_as_script

HERE = os.path.dirname(os.path.abspath(__file__))
SET42 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set42")


def _case(name: str) -> tuple[str, str]:
    with open(os.path.join(SET42, "cases", name), encoding="utf-8") as stream:
        case = stream.read()
    with open(os.path.join(SET42, "correct", name), encoding="utf-8") as stream:
        correct = stream.read()
    return case, correct


# --- AD305: no input reached, computed inputs -----------------------------------------------------

# Energies predicted outside torch and wrapped in a new leaf; the gradient is asked with respect to
# a flattened view of the positions, which nothing used.
ENERGY_FROM_NUMPY = """
    import numpy as np
    import torch

    positions = torch.randn(4, 3, requires_grad=True)
    pairwise = np.linalg.norm(positions.detach().numpy()[:, None] - positions.detach().numpy()[None], axis=-1)
    energy = torch.tensor(pairwise.sum(), requires_grad=True)
    coords = positions.reshape(-1)
    forces = -torch.autograd.grad(energy, coords)[0]  # GRAD
"""

# Two computed inputs, one of them used: a zero gradient for the unused one is still offered.
ONE_OF_TWO_HIDDEN_STATES = """
    import torch

    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3)
    h1 = x @ w
    h2 = torch.tanh(x @ w)
    out = (h1 ** 2).sum()
    g1, g2 = torch.autograd.grad(out, [h1, h2])  # GRAD
"""


def test_the_set42_ode_solution_gets_no_zero_gradient_help(tmp_path):
    case, _ = _case("ode_solution_wrapped_in_new_tensors_differentiated_by_time.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD305" and outcome.diagnosis.primary.line == 42
    assert not any(h.replacement for h in outcome.diagnosis.help)
    assert not any("materialize_grads=True)" in (h.replacement or "") for h in outcome.diagnosis.help)
    assert any("none of the inputs is used" in note for note in outcome.diagnosis.notes)


def test_a_reshaped_input_no_output_reaches_gets_no_zero_gradient_help(tmp_path):
    outcome = run_as_script(tmp_path, ENERGY_FROM_NUMPY)
    assert outcome.diagnosis.code == "AD305"
    assert not any("materialize_grads" in (h.replacement or "") for h in outcome.diagnosis.help)


def test_one_unused_input_of_two_still_gets_the_zero_gradient_help(tmp_path):
    outcome = run_as_script(tmp_path, ONE_OF_TWO_HIDDEN_STATES)
    assert outcome.diagnosis.code == "AD305"
    assert any("materialize_grads=True" in (h.replacement or "") for h in outcome.diagnosis.help)
