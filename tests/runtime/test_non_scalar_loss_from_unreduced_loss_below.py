"""AD112 on a tensor of losses made from a loss function called with reduction='none' several
operations earlier (set 17's doctr recognizer: a loss per character, masked, then averaged per
word): the loss function's node is found in the graph below the failing tensor. Since stop 47 the
help is advice that names both reductions, the mean (the loss function's default) and the sum: they
train differently, and the program does not show which one is meant (set 45's per-sample loss
meant the sum, this file's recognizer the mean)."""

from __future__ import annotations

import torch

from helpers import run_as_script, run_plain

LOSS_PER_IMAGE = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Conv2d(3, 1, 3, padding=1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    images, masks = torch.randn(6, 3, 8, 8), (torch.rand(6, 1, 8, 8) > 0.5).float()
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        per_pixel = F.binary_cross_entropy_with_logits(model(images), masks, reduction="none")
        per_image = per_pixel.flatten(1).mean(dim=1) * 2.0
        per_image.backward()  # BACKWARD
        optimizer.step()
        losses.append(per_image.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

INTENDED = LOSS_PER_IMAGE.replace("        per_image.backward()  # BACKWARD\n",
                                  "        per_image = per_image.mean()\n        per_image.backward()\n")

# Not losses: a prediction backpropagated as it is. The help keeps the sum (no default to follow).
PREDICTION = """
    import torch
    from torch import nn

    model = nn.Linear(3, 2)
    prediction = torch.tanh(model(torch.randn(4, 3)))
    prediction.backward()
"""


def test_a_loss_per_image_gets_advice_naming_both_reductions(tmp_path):
    outcome = run_as_script(tmp_path, LOSS_PER_IMAGE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD112"
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert "BinaryCrossEntropyWithLogitsBackward0" in " ".join(diagnosis.notes)
    [advice] = diagnosis.help
    assert advice.replacement is None
    assert "per_image.mean()" in advice.message and "per_image.sum()" in advice.message
    assert "6 times larger" in advice.message and "does not choose" in advice.message


def test_the_two_reductions_the_advice_names_train_differently(tmp_path):
    """Why the doctor does not choose: both run, and they end with different parameters."""
    averaged = run_plain(tmp_path, INTENDED, "averaged.py")
    summed = run_plain(tmp_path, INTENDED.replace("per_image.mean()", "per_image.sum()"), "summed.py")
    assert not all(torch.equal(a, b) for a, b in zip(averaged["result"][1:], summed["result"][1:]))


def test_a_prediction_keeps_the_sum(tmp_path):
    outcome = run_as_script(tmp_path, PREDICTION)
    assert outcome.diagnosis.code == "AD112"
    assert ".sum()" in outcome.diagnosis.help[0].replacement
