"""AD148 when `scaler.update()` sits in the branch of a step that is skipped on the gradients'
norm (set 17's LVSM trainer): the skip is chosen from the unscaled gradients, so unscale_() stays
where it is, and update() has to run on every iteration. The help moves update() after the if."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

UPDATE_SKIPPED_WITH_THE_STEP = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=64.0)
    inputs, targets = torch.randn(5, 8, 4), torch.randn(5, 8, 2)
    targets[2] *= 50.0  # one batch far off: its gradient norm is above the limit
    losses = []
    for step in range(5):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs[step]), targets[step])
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if torch.isfinite(total_norm) and total_norm < 25.0:
            scaler.step(optimizer)
            scaler.update()  # UPDATE
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

INTENDED = UPDATE_SKIPPED_WITH_THE_STEP.replace(
    "            scaler.update()  # UPDATE\n", "        scaler.update()\n")

# Gradient accumulation: the step's condition reads the loop counter, not the gradients; the
# help stays the older one (unscale_() moved into the step's branch).
ACCUMULATION = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu")
    for step in range(4):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % 2 == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""


def test_the_update_in_the_skipped_branch_is_named(tmp_path):
    outcome = run_as_script(tmp_path, UPDATE_SKIPPED_WITH_THE_STEP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD148"
    assert diagnosis.primary.line == outcome.line("UPDATE")
    assert diagnosis.help[0].message.startswith("call scaler.update() on every iteration")
    assert diagnosis.help[0].replacement.endswith("\nscaler.update()")


def test_the_update_moved_after_the_if_trains_as_intended(tmp_path):
    outcome = run_as_script(tmp_path, UPDATE_SKIPPED_WITH_THE_STEP)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_accumulation_keeps_the_unscale_moved_into_the_step_branch(tmp_path):
    outcome = run_as_script(tmp_path, ACCUMULATION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD148"
    assert not diagnosis.help[0].message.startswith("call scaler.update() on every iteration")
