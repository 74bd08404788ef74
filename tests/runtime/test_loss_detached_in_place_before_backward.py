"""AD214 named at `loss = loss.detach_().requires_grad_(True)` (set 20's Modof#4): the in-place
detach turns the loss into a new leaf, backward() stops there, and every step of the optimizer
changes nothing. `detach()` was named before; `detach_()` is the same cut. The change drops it,
and the program then trains as the hand-written version (the line removed) does."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

LOSS_MADE_A_LEAF = """
    import torch
    from torch import nn

    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(4):
        x = torch.randn(16, 4)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss = loss.detach_().requires_grad_(True)  # CUT
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

LINE_REMOVED = LOSS_MADE_A_LEAF.replace("        loss = loss.detach_().requires_grad_(True)  # CUT\n", "")


def test_the_in_place_detach_is_the_line_to_change(tmp_path):
    outcome = run_program(tmp_path, LOSS_MADE_A_LEAF)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD214"
    assert diagnosis.primary.line == outcome.line("CUT")
    assert "detach_().requires_grad_()" in diagnosis.primary.note
    assert diagnosis.help[0].replacement.strip() == "loss = loss.requires_grad_(True)"


def test_dropping_the_cut_trains_as_the_hand_written_version(tmp_path):
    outcome = run_program(tmp_path, LOSS_MADE_A_LEAF)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    expected = run_plain(tmp_path, LINE_REMOVED, "expected.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, expected))
