"""AD214 (an optimizer keeps stepping and none of its parameters ever gets a gradient) when the
loss is computed from new leaves made by `x.detach().requires_grad_()`: backward() stops at them
(they get the gradients). The line that made them is the primary location, and the help drops
detach() there, so the graph reaches the optimizer's parameters (set 11's TiDE predictions
re-wrapped as leaves)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

FEATURES_REWRAPPED = """
    import torch
    from torch import nn


    class MultiTaskHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(8, 6), nn.Tanh())
            self.heads = nn.Linear(6, 3)

        def forward(self, x):
            out = self.heads(self.encoder(x))
            return [task.detach().requires_grad_() for task in out.unbind(-1)]  # CUT


    torch.manual_seed(0)
    model = MultiTaskHeads()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, targets = torch.randn(16, 8), torch.randn(3, 16)
    for step in range(3):
        predictions = model(x)
        loss = sum(((p - t) ** 2).mean() for p, t in zip(predictions, targets))
        loss.backward()
        optimizer.step()  # STEP
        optimizer.zero_grad()
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = FEATURES_REWRAPPED.replace("task.detach().requires_grad_()", "task")

INPUT_GRADIENT_NEXT_TO_TRAINING = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    for step in range(3):
        probe = x.detach().requires_grad_()
        loss = nn.functional.cross_entropy(model(probe), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""


def test_the_line_making_detached_leaves_is_named_and_the_help_drops_detach(tmp_path):
    outcome = run_program(tmp_path, FEATURES_REWRAPPED)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert outcome.line("STEP") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == "return [task.requires_grad_() for task in out.unbind(-1)]"


def test_the_help_applied_trains_the_encoder_as_intended(tmp_path):
    outcome = run_program(tmp_path, FEATURES_REWRAPPED)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD214"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_detached_inputs_of_a_model_that_trains_say_nothing(tmp_path):
    outcome = run_program(tmp_path, INPUT_GRADIENT_NEXT_TO_TRAINING)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD214"]


def test_a_detach_under_a_clone_is_the_cut_too(tmp_path):
    source = FEATURES_REWRAPPED.replace("task.detach().requires_grad_()", "task.detach().clone().requires_grad_(True)")
    outcome = run_program(tmp_path, source)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert outcome.diagnosis.primary.line == outcome.line("CUT")
    assert outcome.diagnosis.help[0].replacement == \
        "return [task.clone().requires_grad_(True) for task in out.unbind(-1)]"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
