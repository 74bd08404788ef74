"""AD302 when the second backward() is of the very tensor whose backward() already ran: a loss
criterion that calls backward() itself and returns the loss, and a training step written for an
ordinary criterion that calls backward() again (set 17's R-Drop summarization example). The
gradients are already in .grad; retain_graph=True would add them twice. The help deletes the
second call."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

CRITERION_ALREADY_BACKPROPAGATES = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))


    class SmoothedCrossEntropy:
        def __init__(self, smoothing):
            self.smoothing = smoothing

        def __call__(self, logits, target):
            loss = F.cross_entropy(logits, target, label_smoothing=self.smoothing)
            loss.backward()  # FIRST
            return loss


    criterion = SmoothedCrossEntropy(0.1)
    losses = []
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()  # SECOND
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

# The hand-written fix: the step backpropagates nothing more.
INTENDED = CRITERION_ALREADY_BACKPROPAGATES.replace("        loss.backward()  # SECOND\n", "")

# A zero_grad() between the two calls: the second call is what leaves gradients for the step, so
# deleting it would change what trains; the diagnosis keeps its other advice.
CLEARED_BETWEEN = CRITERION_ALREADY_BACKPROPAGATES.replace(
    "        loss = criterion(model(x), y)\n", "        loss = criterion(model(x), y)\n        optimizer.zero_grad()\n")


def test_the_second_backward_is_named_and_the_first_shown(tmp_path):
    outcome = run_program(tmp_path, CRITERION_ALREADY_BACKPROPAGATES)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("SECOND")
    assert outcome.line("FIRST") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].message.startswith("delete this second loss.backward()")
    assert not any("retain_graph" in (h.replacement or "") for h in diagnosis.help)


def test_deleting_the_second_backward_trains_as_intended(tmp_path):
    outcome = run_program(tmp_path, CRITERION_ALREADY_BACKPROPAGATES)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_no_deletion_when_the_gradients_were_cleared_between(tmp_path):
    outcome = run_program(tmp_path, CLEARED_BETWEEN)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert not any(h.message.startswith("delete this second") for h in diagnosis.help)
