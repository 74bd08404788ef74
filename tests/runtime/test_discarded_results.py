"""AD157: an out-of-place tensor method called as a statement, its result thrown away. Nothing
fails; the values the line was meant to change reach the loss unchanged (held-out set 14,
lucidrains/flamingo-pytorch#10 `attn.masked_fill(mask, 0.)`, and set 13's DNN-WPE, both
undiagnosed on their first runs). This program is another one: a tagger whose forward masks the
scores of padding positions, and a training loop that clips its predictions."""

from __future__ import annotations

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

MASK_IN_FORWARD = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(20, 8)
            self.out = nn.Linear(8, 5)

        def forward(self, tokens, padding):
            scores = self.out(self.embed(tokens))
            scores.masked_fill(padding.unsqueeze(-1), 0.0)  # DISCARDED
            return scores


    model = Tagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    tokens = torch.randint(0, 20, (3, 6))
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[:, 4:] = True
    for step in range(3):
        optimizer.zero_grad()
        loss = model(tokens, padding).pow(2).mean()
        loss.backward()  # BACKWARD
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

MEANT = MASK_IN_FORWARD.replace("scores.masked_fill(padding.unsqueeze(-1), 0.0)  # DISCARDED",
                                "scores = scores.masked_fill(padding.unsqueeze(-1), 0.0)")

CLIP_IN_LOOP = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(10, 4)
    seen = set()
    for step in range(2):
        prediction = x @ w
        prediction.clip(-1.0, 1.0)  # DISCARDED
        seen.add(step)
        loss = (prediction - 0.5).pow(2).mean()
        loss.backward()
"""

KEPT = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(10, 4)
    seen = set()
    prediction = (x @ w).clip(-1.0, 1.0)
    seen.add(0)
    masked = prediction.masked_fill(prediction > 0.9, 0.0)
    masked.sum().backward()
"""


def test_the_discarded_mask_in_a_forward_is_named_and_kept(tmp_path):
    outcome = run_program(tmp_path, MASK_IN_FORWARD)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD157"]
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("DISCARDED")
    assert diagnosis.primary.note == "masked_fill() returns a new tensor; this line throws it away"
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert diagnosis.help[0].replacement == "scores = scores.masked_fill(padding.unsqueeze(-1), 0.0)"


def test_the_help_applied_trains_as_the_masked_tagger(tmp_path):
    outcome = run_program(tmp_path, MASK_IN_FORWARD)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD157"]
    help_ = diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help_.location, help_.replacement), "fixed.py")
    meant = run_plain(tmp_path, MEANT, "meant.py")
    buggy = run_plain(tmp_path, MASK_IN_FORWARD, "buggy.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], meant["result"]))
    assert not all(torch.allclose(a, b) for a, b in zip(buggy["result"], meant["result"]))
    assert not [d for d in run_program(tmp_path, MEANT).diagnoses if d.code == "AD157"]


def test_a_method_other_types_share_is_reported_on_a_tensor_only(tmp_path):
    outcome = run_program(tmp_path, CLIP_IN_LOOP)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD157"]
    assert diagnosis.primary.line == outcome.line("DISCARDED")  # not `seen.add(step)`
    assert diagnosis.help[0].replacement == "prediction = prediction.clip(-1.0, 1.0)"


def test_results_that_are_kept_are_silent(tmp_path):
    outcome = run_program(tmp_path, KEPT)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD157"]
