"""AD310: a gradient that torch.autograd.grad(..., allow_unused=True) returned as None (the output
does not use that input) is used in arithmetic by a hand-written update, and Python raises a
TypeError. The help skips the None gradients at the top of the loop, and the changed program
trains like the intended one."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

EXPERTS_UPDATED_BY_HAND = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    experts = nn.ModuleList([nn.Linear(3, 1) for _ in range(2)])
    params = list(experts.parameters())
    batches = [(torch.randn(4, 3), 0), (torch.randn(4, 3), 1), (torch.randn(4, 3), 0)]
    for x, k in batches:
        loss = experts[k](x).pow(2).mean()
        grads = torch.autograd.grad(loss, params, allow_unused=True)  # GRADS
        with torch.no_grad():
            for g, p in zip(grads, params):
                p -= 0.1 * g  # USE
    result = [p.detach().clone() for p in params]
"""

INTENDED = EXPERTS_UPDATED_BY_HAND.replace(
    "                p -= 0.1 * g  # USE", "                if g is None:\n                    continue\n"
                                          "                p -= 0.1 * g")


def test_the_none_gradient_is_traced_to_allow_unused(tmp_path):
    outcome = run_as_script(tmp_path, EXPERTS_UPDATED_BY_HAND)
    assert isinstance(outcome.error, TypeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD310"
    assert diagnosis.primary.line == outcome.line("USE")
    assert outcome.line("GRADS") in {location.line for location in diagnosis.related}
    assert "g is None" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "if g is None:\n    continue\np -= 0.1 * g"


def test_skipping_the_none_gradients_trains_like_the_intended_program(tmp_path):
    outcome = run_as_script(tmp_path, EXPERTS_UPDATED_BY_HAND)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    assert not torch.equal(fixed["result"][2], run_plain(tmp_path, INTENDED.replace(
        "for x, k in batches:", "for x, k in []:"), "untrained.py")["result"][2])  # expert 1 trained once


def test_a_none_that_is_not_a_gradient_is_left_to_the_other_diagnoses(tmp_path):
    outcome = run_as_script(tmp_path, """
        import torch

        scale = None
        for value in [torch.ones(2)]:
            value * scale
    """)
    assert isinstance(outcome.error, TypeError)
    assert all(d.code != "AD310" for d in outcome.diagnoses)
