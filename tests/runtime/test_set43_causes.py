"""Held-out set 43's causes (docs/bug-reports.md, "Set 43"). The other shape below was written
before the change was run on it.

- AD325, a parameter that its module's code reads only in comparisons (discuss.pytorch.org 149907,
  a learnable threshold used as `(features > self.thres).float()`): the comparison has no graph,
  the parameter's `.grad` stays None and it never trains. The comparison is named; the help is
  advice (the sharpness of a soft step is the model's choice).
- AD112 on torch.autograd.grad(u, t) whose `inputs` t does not require grad (the PyTorch Forums
  thread "Gradient Computation for Physics Equations": `torch.autograd.grad(displacement, ones)`,
  the seed given as the inputs): passing grad_outputs alone leaves the call failing, so that help
  is no longer offered; the advice says which argument is which."""

from __future__ import annotations

import os

from autograd_doctor.diagnosis import codes
from helpers import run_as_script, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET43 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set43")


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET43, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def _codes(outcome) -> list[str]:
    return [d.code for d in outcome.diagnoses]


# Another shape: a spiking neuron whose firing threshold is a parameter, compared with `.ge()`.
SPIKING_THRESHOLD = """
    import torch
    from torch import nn

    torch.manual_seed(1)


    class SpikingLayer(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.synapses = nn.Linear(n_in, n_out)
            self.v_th = nn.Parameter(torch.full((n_out,), 0.3))

        def forward(self, x):
            membrane = torch.tanh(self.synapses(x))
            spikes = membrane.ge(self.v_th).float()
            return membrane * spikes


    layer = SpikingLayer(5, 7)
    readout = nn.Linear(7, 2)
    optimizer = torch.optim.Adam([*layer.parameters(), *readout.parameters()], lr=0.01)
    x, y = torch.randn(32, 5), torch.randn(32, 2)
    for epoch in range(3):
        optimizer.zero_grad()
        loss = (readout(layer(x)) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
    result = {"v_th": layer.v_th.detach().clone()}
"""

# Near-twins that stay silent: the threshold also scales the output (it gets a gradient), and a
# threshold kept as a buffer (not in the optimizer).
THRESHOLD_ALSO_IN_ARITHMETIC = SPIKING_THRESHOLD.replace(
    "return membrane * spikes", "return membrane * spikes - self.v_th * 0.1")
THRESHOLD_AS_BUFFER = SPIKING_THRESHOLD.replace(
    "self.v_th = nn.Parameter(torch.full((n_out,), 0.3))",
    'self.register_buffer("v_th", torch.full((n_out,), 0.3))')


def test_the_set43_threshold_is_named_at_the_comparison(tmp_path):
    case = _source("cases", "learnable_threshold_used_only_through_comparison")
    outcome = run_program(tmp_path, case)
    assert outcome.error is None
    found = [d for d in outcome.diagnoses if d.code == codes.COMPARED_ONLY_PARAMETER]
    assert len(found) == 1, _codes(outcome)
    diagnosis = found[0]
    line = case.splitlines()[diagnosis.primary.line - 1]
    assert "features > self.thres" in line
    assert "sigmoid" in diagnosis.help[0].message
    # Advice: what the soft step's sharpness is, the program does not show.
    assert all(not h.replacement for h in diagnosis.help)


def test_the_spiking_threshold_compared_with_ge_is_named(tmp_path):
    outcome = run_program(tmp_path, SPIKING_THRESHOLD)
    assert outcome.error is None
    found = [d for d in outcome.diagnoses if d.code == codes.COMPARED_ONLY_PARAMETER]
    assert len(found) == 1, _codes(outcome)
    line = SPIKING_THRESHOLD.splitlines()[found[0].primary.line - 1]
    assert "membrane.ge(self.v_th)" in line
    assert "SpikingLayer.v_th" in found[0].notes[0]


def test_the_soft_threshold_of_the_correct_version_is_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", "learnable_threshold_used_only_through_comparison"))
    assert outcome.error is None and not outcome.diagnoses


def test_a_threshold_also_used_in_arithmetic_is_silent(tmp_path):
    outcome = run_program(tmp_path, THRESHOLD_ALSO_IN_ARITHMETIC)
    assert outcome.error is None
    assert codes.COMPARED_ONLY_PARAMETER not in _codes(outcome)


def test_a_threshold_kept_as_a_buffer_is_silent(tmp_path):
    outcome = run_program(tmp_path, THRESHOLD_AS_BUFFER)
    assert outcome.error is None and not outcome.diagnoses


# --- AD112: torch.autograd.grad() whose inputs are not in the output's graph ------------------------

# Another shape: a PINN's time derivative taken with respect to collocation times made without
# requires_grad (the pointwise-derivative help would leave the call failing).
TIMES_WITHOUT_GRAD = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    t = torch.linspace(0.0, 1.0, 16).reshape(-1, 1)
    u = net(t)
    du_dt = torch.autograd.grad(u, t)[0]
    result = {"du_dt": du_dt}
"""
TIMES_WITH_GRAD = TIMES_WITHOUT_GRAD.replace(".reshape(-1, 1)\n", ".reshape(-1, 1).requires_grad_()\n")


def test_the_displacement_gradient_taken_with_respect_to_ones_gets_advice(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", "displacement_gradient_taken_with_respect_to_ones"))
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    notes = " ".join(outcome.diagnosis.notes)
    assert "`inputs`" in notes and "ones does not require grad" in notes and "grad_outputs=" in notes
    assert all(not h.replacement for h in outcome.diagnosis.help)


def test_times_without_requires_grad_get_advice_not_grad_outputs(tmp_path):
    outcome = run_as_script(tmp_path, TIMES_WITHOUT_GRAD)
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    assert "t does not require grad" in " ".join(outcome.diagnosis.notes)
    assert all(not h.replacement for h in outcome.diagnosis.help)


def test_times_that_require_grad_keep_the_pointwise_help(tmp_path):
    outcome = run_as_script(tmp_path, TIMES_WITH_GRAD)
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    assert any("grad_outputs=torch.ones_like(u)" in (h.replacement or "") for h in outcome.diagnosis.help)
