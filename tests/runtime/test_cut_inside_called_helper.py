"""AD301 where the statement that loses the gradient calls a helper of the user's files given the
model (`logits = sliding_window(scans, model)`, MONAI's sliding-window inference), and the helper
detaches what the model returns before blending it into the output (`out[..., i:j] += window`).
The `.detach()` inside the helper is named, with the call; removing it trains the model as the
hand-written helper without detach does. A helper that keeps the graph is silent."""

import torch

from helpers import apply_help, run_plain, run_program

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def blend_windows(images, predictor, size=8):
    output, count = None, torch.zeros(1, 1, images.shape[2], images.shape[3])
    for top in range(0, images.shape[2] - size + 1, size // 2):
        window = predictor(images[:, :, top:top + size])DETACH  # WINDOW
        if output is None:
            output = torch.zeros(images.shape[0], window.shape[1], images.shape[2], images.shape[3])
        output[:, :, top:top + size] += window
        count[:, :, top:top + size] += 1
    return output / count


model = nn.Conv2d(1, 2, 3, padding=1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.randn(2, 1, 16, 16)
labels = (images > 0).long().squeeze(1)
losses = []
for step in range(2):
    logits = blend_windows(images, model)  # CALL
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""


def test_a_detach_inside_the_called_helper_is_named_and_removed(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("DETACH", ".detach()"))
    assert "does not require grad" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == outcome.line("WINDOW")
    assert outcome.line("CALL") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement.strip() == "window = predictor(images[:, :, top:top + size])"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, PROGRAM.replace("DETACH", ""), "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["params"], reference["params"]))


def test_a_helper_that_keeps_the_graph_is_silent(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("DETACH", ""))
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []
