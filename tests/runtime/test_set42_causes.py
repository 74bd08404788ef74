"""Held-out set 42's causes (docs/bug-reports.md, "Set 42"). The other shapes below were written
before the changes were run on them.

- AD305, torch.autograd.grad whose only inputs are computed tensors (a view `t[-1, 0]`, a reshape)
  that the output never reached (pytorch#125532, an ODE solved on NumPy arrays and wrapped in new
  tensors): a zero gradient (materialize_grads=True) would run and answer nothing that was asked,
  so it is no longer offered, as it was not for leaf inputs.
- AD301, a derivative from torch.autograd.functional (jacobian, hessian, vjp, ...) taken without
  create_graph=True and differentiated again (pytorch#103509, a Taylor term g(a) + g'(a)(x - a)):
  the call, also inside a function of the user's files, is named and given create_graph=True."""

from __future__ import annotations

import os

import torch

import textwrap

from helpers import apply_help, run_as_script, run_plain, run_program

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


# --- AD301: torch.autograd.functional without create_graph ----------------------------------------

# A curvature penalty: the trace of the Hessian of an energy, minimised over the positions.
HESSIAN_TRACE = """
    import torch

    torch.manual_seed(3)
    positions = torch.randn(4, requires_grad=True)
    optimizer = torch.optim.SGD([positions], lr=0.01)


    def energy(x):
        return (x ** 4).sum() - (x ** 2).sum()


    for step in range(3):
        optimizer.zero_grad()
        curvature = torch.autograd.functional.hessian(energy, positions)  # HESSIAN
        loss = curvature.diagonal().sum()
        loss.backward()
        optimizer.step()
    result = {"positions": positions.detach().clone()}
"""

HESSIAN_TRACE_BY_HAND = HESSIAN_TRACE.replace("torch.autograd.functional.hessian(energy, positions)",
                                              "torch.autograd.functional.hessian(energy, positions, create_graph=True)")

# The Jacobian only printed, and the loss taken from the outputs: nothing to say.
JACOBIAN_LOGGED = """
    import torch

    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(3)


    def layer(v):
        return torch.tanh(w @ v)


    jac = torch.autograd.functional.jacobian(layer, x)
    print(jac.norm())
    loss = layer(x).sum()
    loss.backward()
    result = {"grad": w.grad.clone(), "jac": jac}
"""


def _same_result(tmp_path, fixed: str, correct: str):
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    correct_result = run_plain(tmp_path, textwrap.dedent(correct), "correct.py")["result"]
    assert fixed_result.keys() == correct_result.keys()
    for key in fixed_result:
        assert torch.allclose(fixed_result[key], correct_result[key], rtol=1e-5, atol=1e-6)


def test_the_set42_jacobian_in_a_function_is_given_create_graph(tmp_path):
    case, correct = _case("taylor_term_jacobian_without_create_graph.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD301" and outcome.diagnosis.primary.line == 18
    assert outcome.diagnosis.help[0].replacement == "return torch.autograd.functional.jacobian(g, a, create_graph=True)"
    _same_result(tmp_path, apply_help(outcome), correct)


def test_a_hessian_trace_penalty_is_given_create_graph(tmp_path):
    outcome = run_as_script(tmp_path, HESSIAN_TRACE)
    assert outcome.diagnosis.code == "AD301" and outcome.diagnosis.primary.line == outcome.line("HESSIAN")
    _same_result(tmp_path, apply_help(outcome), HESSIAN_TRACE_BY_HAND)


def test_a_jacobian_only_printed_is_silent(tmp_path):
    outcome = run_program(tmp_path, JACOBIAN_LOGGED)
    assert outcome.error is None and not outcome.diagnoses
