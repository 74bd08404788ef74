"""AD168: a reentrant checkpoint called with preserve_rng_state=False around a function that draws
random numbers (dropout in training mode): backward() recomputes it with another dropout mask, so
the gradients belong to a forward that did not run, silently (held-out set 18, PIDM#66,
undiagnosed on the first run). The help passes preserve_rng_state=True."""

import torch

from helpers import apply_help, run_plain, run_program

DROPOUT_BLOCK = """
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
layer = torch.nn.Linear(6, 6)
dropout = torch.nn.Dropout(0.4)
head = torch.nn.Linear(6, 1)
optimizer = torch.optim.SGD(list(layer.parameters()) + list(head.parameters()), lr=0.1)

def block(h):
    return dropout(torch.tanh(layer(h)))

x, y = torch.randn(16, 6), torch.randn(16, 1)
for step in range(3):
    optimizer.zero_grad()
    h = x * 1.0
    h.requires_grad_()
    out = checkpoint(block, h, use_reentrant=True, preserve_rng_state=False)  # CHECKPOINT
    loss = F.mse_loss(head(out), y)
    loss.backward()  # BACKWARD
    optimizer.step()
params = [p.detach().clone() for p in list(layer.parameters()) + list(head.parameters())]
"""

ANSWER = DROPOUT_BLOCK.replace("preserve_rng_state=False", "preserve_rng_state=True")


def test_the_checkpoint_is_named_and_its_random_state_replayed(tmp_path):
    outcome = run_program(tmp_path, DROPOUT_BLOCK)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD168")
    assert diagnosis.primary.line == outcome.line("CHECKPOINT")
    assert any(r.line == outcome.line("BACKWARD") for r in diagnosis.related)
    assert "replays the forward's random numbers" in diagnosis.help[0].message
    assert "preserve_rng_state=True" in diagnosis.help[0].replacement


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, DROPOUT_BLOCK)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    unreplayed = run_plain(tmp_path, DROPOUT_BLOCK, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(unreplayed, answer))  # the mask matters here


def test_no_random_numbers_or_a_replayed_state_is_silent(tmp_path):
    for source in (ANSWER, DROPOUT_BLOCK.replace("dropout = torch.nn.Dropout(0.4)", "dropout = torch.nn.Identity()"),
                   DROPOUT_BLOCK.replace("dropout = torch.nn.Dropout(0.4)", "dropout = torch.nn.Dropout(0.4).eval()")):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD168"]
