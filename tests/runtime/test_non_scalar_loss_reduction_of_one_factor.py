"""AD112 (backward() of a tensor with several elements) when the loss is a product whose last factor
carries the reduction: `loss = per_sample * weights.mean()`. A method call binds tighter than `*`,
so the mean reduces the weights alone and the loss keeps one value per sample. The general help,
`loss.sum()`, ran but trained on the unweighted losses scaled by the mean weight (held-out set 14,
DQN-Atari-Agents#5: help wrong on the first run); the help now puts the product in brackets before
the reduction. This program is another one: a regression whose samples carry confidence weights."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

WEIGHTED_REGRESSION = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    confidence = torch.rand(6, 1)
    for step in range(3):
        optimizer.zero_grad()
        squared_error = (model(x) - y) ** 2
        loss = squared_error * confidence.mean().float()  # LOSS
        loss.backward()  # BACKWARD
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = WEIGHTED_REGRESSION.replace("squared_error * confidence.mean().float()",
                                       "(squared_error * confidence).mean().float()")

# A mean distributes over `-`: the general help is kept where the reduced factor is subtracted.
BASELINE_SUBTRACTED = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    rewards = torch.randn(4)
    loss = w * rewards - rewards.mean()
    loss.backward()  # BACKWARD
"""


def test_the_product_is_named_and_reduced_as_a_whole(tmp_path):
    outcome = run_as_script(tmp_path, WEIGHTED_REGRESSION)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD112"
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert diagnosis.primary.note == "confidence.mean() reduces one factor only, not the product"
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert diagnosis.help[0].replacement == "loss = (squared_error * confidence).mean().float()"
    assert diagnosis.help[0].message.startswith("reduce the whole product")


def test_the_help_applied_trains_as_the_weighted_regression(tmp_path):
    outcome = run_as_script(tmp_path, WEIGHTED_REGRESSION)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    # The general help, loss.sum(), trains another model.
    summed = run_plain(tmp_path, WEIGHTED_REGRESSION.replace("loss.backward()", "loss.sum().backward()"), "summed.py")
    assert not all(torch.allclose(a, b) for a, b in zip(summed["result"], intended["result"]))


def test_a_reduction_that_distributes_keeps_the_general_help(tmp_path):
    outcome = run_as_script(tmp_path, BASELINE_SUBTRACTED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD112" and diagnosis.primary.line == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "loss.sum().backward()"
