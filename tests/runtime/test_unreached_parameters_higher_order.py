"""AD301's "parameter got no gradient" on losses built from derivatives: a physics-informed
residual on du/dx does not depend on the last layer's bias at all (nothing cut it), so without a
cut found in the source the doctor stays silent there; a `.detach()` in the loss's lines is still
named."""

from __future__ import annotations

import textwrap

import pytest

from helpers import grads_equal, run_plain, run_program

PINN = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    aux = nn.Linear(1, 1)
    points = torch.linspace(0, 1, 16).unsqueeze(1).requires_grad_()
    optimizer = torch.optim.Adam([*net.parameters(), *aux.parameters()], lr=1e-3)
    for _ in range(3):
        u = net(points)
        du = torch.autograd.grad(u.sum(), points, create_graph=True)[0]
        extra = aux(points)
        loss = (du - torch.cos(points)).pow(2).mean() + 0.1 * extra.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    grads = [p.grad for p in net[0].parameters()]
"""


@pytest.mark.parametrize("mode", ["light", "full"])
def test_a_derivative_loss_that_does_not_depend_on_a_bias_is_not_reported(tmp_path, mode):
    outcome = run_program(tmp_path, PINN, mode=mode)
    assert outcome.error is None
    assert not outcome.diagnoses, [str(d) for d in outcome.diagnoses]
    assert outcome.namespace["net"][2].bias.grad is None  # what it is about: no gradient, and nothing cut
    assert grads_equal(outcome.namespace["grads"], run_plain(tmp_path, textwrap.dedent(PINN))["grads"])


def test_a_detach_in_the_loss_lines_is_still_named(tmp_path):
    source = PINN.replace("extra = aux(points)\n", "extra = aux(points).detach()  # CUT\n")
    outcome = run_program(tmp_path, source)
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD206"  # a term cut before it is added: the same line, as without derivatives
    assert diagnosis.primary.line == outcome.line("CUT")
    assert outcome.namespace["net"][2].bias.grad is None  # the bias no derivative reaches: not reported
