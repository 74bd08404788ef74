"""torch.autograd.grad whose inputs are all unused because the output was computed from a
`copy.deepcopy` of the module that holds them: the copy's parameters are new leaves with no path
back. AD305 names the deepcopy (the line to change) and does not offer allow_unused /
materialize_grads, which would give None or zeros for every input: a step that changes nothing."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

LOOKAHEAD_THROUGH_A_COPY = """
    import copy

    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for step in range(3):
        scorer = copy.deepcopy(net)  # COPY
        loss = nn.functional.mse_loss(scorer(x), y)
        grads = torch.autograd.grad(loss, list(net.parameters()))  # GRAD
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads):
                p -= 0.1 * g
    result = [p.detach().clone() for p in net.parameters()]
"""

INTENDED = LOOKAHEAD_THROUGH_A_COPY.replace("copy.deepcopy(net)", "net")

NOTHING_USED = """
    import torch

    w = torch.ones(3, requires_grad=True)
    x = torch.randn(3, requires_grad=True)
    loss = (x * 2).sum()
    grads = torch.autograd.grad(loss, [w])  # GRAD
"""


def test_the_deepcopy_is_named_and_the_help_uses_the_module_itself(tmp_path):
    outcome = run_as_script(tmp_path, LOOKAHEAD_THROUGH_A_COPY)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert diagnosis.primary.line == outcome.line("COPY")
    assert outcome.line("GRAD") in {location.line for location in diagnosis.related}
    assert diagnosis.help[0].replacement == "scorer = net"
    assert not any("materialize_grads" in (help.replacement or "") for help in diagnosis.help)


def test_the_help_applied_trains_the_network_like_the_intended_program(tmp_path):
    outcome = run_as_script(tmp_path, LOOKAHEAD_THROUGH_A_COPY)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert len(fixed["result"]) == len(intended["result"]) == 4
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_no_input_used_and_no_copy_offers_no_zero_gradient(tmp_path):
    outcome = run_as_script(tmp_path, NOTHING_USED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert not any(help.replacement for help in diagnosis.help)
    assert any("none of the inputs" in note for note in diagnosis.notes)
