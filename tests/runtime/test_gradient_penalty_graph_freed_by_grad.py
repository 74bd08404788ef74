"""AD302 when the graph was freed by an earlier torch.autograd.grad whose result a second loss uses:
an input-gradient penalty computed by an attribution helper without create_graph=True (set 19's
NeSyXIL case). retain_graph=True would keep the graph but leave the gradient a constant, so the
penalty would train nothing; the help is create_graph=True on that call, and the call is the
primary location. The helper's line is above the loop's lines in the file, which says nothing of
the order they run in: no in-place write "between the two backward() calls" is claimed from that."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

PENALTY_THROUGH_HELPER = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    def input_gradients(outputs, inputs):
        return torch.autograd.grad(outputs.sum(), inputs)[0]  # GRAD


    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
    mask = torch.zeros(10, 6)
    mask[:, :2] = 1.0  # a write in place above the loop, after the helper's line in the file
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        inputs = x.clone().requires_grad_(True)
        log_probs = F.log_softmax(model(inputs), dim=1)
        penalty = (mask * input_gradients(log_probs, inputs)).pow(2).sum()
        loss = F.nll_loss(log_probs, y) + 0.5 * penalty
        loss.backward()  # SECOND
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

# The hand-written fix: the penalty's gradient has a graph, and the step trains through it.
INTENDED = PENALTY_THROUGH_HELPER.replace("torch.autograd.grad(outputs.sum(), inputs)[0]",
                                          "torch.autograd.grad(outputs.sum(), inputs, create_graph=True)[0]")

# What retain_graph=True would give: the same losses, other parameters (the penalty trains nothing).
RETAINED = PENALTY_THROUGH_HELPER.replace("torch.autograd.grad(outputs.sum(), inputs)[0]",
                                          "torch.autograd.grad(outputs.sum(), inputs, retain_graph=True)[0]")


def test_the_grad_call_is_named_with_create_graph(tmp_path):
    outcome = run_program(tmp_path, PENALTY_THROUGH_HELPER)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("GRAD")
    assert outcome.line("SECOND") in [location.line for location in diagnosis.related]
    first = diagnosis.help[0]
    assert "create_graph=True" in first.replacement and "retain_graph" not in first.replacement
    assert not any("in place between the two backward() calls" in note for note in diagnosis.notes)


def test_create_graph_trains_the_penalty_as_intended(tmp_path):
    outcome = run_program(tmp_path, PENALTY_THROUGH_HELPER)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    retained = run_plain(tmp_path, RETAINED, "retained.py")
    # retain_graph=True runs, but the penalty's gradient is a constant: the weights differ.
    assert not all(torch.equal(a, b) for a, b in zip(retained["result"][1:], intended["result"][1:]))
