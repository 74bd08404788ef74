"""AD112 (backward() of a tensor with several elements) when the program reads the tensor again
after backward(): a logged loss, `.item()`, a list of losses. Reduced only inside the call
(`loss.sum().backward()`), the variable would still hold one value per element there (and
`.item()` would fail next); the help reduces the variable itself, `loss = loss.sum()`, then calls
backward() (set 11's FNO trained with an H1 loss reduced over the batch only)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

PER_CHANNEL_LOSS_LOGGED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Conv1d(3, 3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 16), torch.randn(4, 3, 16)
    history = []
    for step in range(3):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean(dim=(0, 2))  # one value per channel
        loss.backward()  # BACKWARD
        optimizer.step()
        history.append(loss.item())
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = PER_CHANNEL_LOSS_LOGGED.replace(".mean(dim=(0, 2))", ".mean(dim=(0, 2)).sum()")

NOT_READ_AFTER = """
    import torch

    x = torch.linspace(0, 1, 5, requires_grad=True)
    u = torch.sin(x)
    u.backward()  # BACKWARD
"""


def test_a_loss_read_after_backward_is_reduced_itself(tmp_path):
    outcome = run_as_script(tmp_path, PER_CHANNEL_LOSS_LOGGED)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD112" and diagnosis.primary.line == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "loss = loss.sum()\nloss.backward()"
    assert "the lines after backward() read it" in diagnosis.help[0].message


def test_the_help_applied_logs_and_trains_as_the_reduced_program(tmp_path):
    outcome = run_as_script(tmp_path, PER_CHANNEL_LOSS_LOGGED)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert fixed["history"] == intended["history"]
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_a_tensor_not_read_after_backward_is_reduced_in_the_call(tmp_path):
    outcome = run_as_script(tmp_path, NOT_READ_AFTER)
    assert outcome.diagnosis.help[0].replacement == "u.sum().backward()"
