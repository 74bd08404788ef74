"""AD301 for a reentrant checkpoint run with gradients on, on inputs none of which requires grad:
its function's parameters get no gradient although backward() succeeds (the buggy program and its
help are in tests/silent: checkpoint_frozen_embeddings). Correct uses stay silent and unchanged,
and the wrapper around CheckpointFunction.apply is gone when the doctor stops."""

import pytest
import torch
from torch.utils.checkpoint import CheckpointFunction

import autograd_doctor
from helpers import grads_equal, run_plain, run_program

PRELUDE = """
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 4))
head = nn.Linear(4, 1)
x = torch.randn(5, 4)
"""

CORRECT = {
    "an input that requires grad": """
h = checkpoint(block, x.requires_grad_(), use_reentrant=True)
head(h).sum().backward()
""",
    "the non-reentrant checkpoint": """
h = checkpoint(block, x, use_reentrant=False)
head(h).sum().backward()
""",
    "a frozen block": """
block.requires_grad_(False)
h = checkpoint(block, x, use_reentrant=True)
head(h).sum().backward()
""",
    "evaluation under no_grad, then training": """
with torch.no_grad():
    checkpoint(block, x, use_reentrant=True)
h = block(x)
head(h).sum().backward()
""",
    "checkpoint_sequential on an input that requires grad": """
h = checkpoint_sequential(block, 2, head(x).expand(5, 4).contiguous(), use_reentrant=True)
h.sum().backward()
""",
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_checkpoint_is_silent_and_unchanged(tmp_path, name):
    source = PRELUDE + CORRECT[name] + "grads = [p.grad for p in [*block.parameters(), *head.parameters()] if p.grad is not None]\n"
    plain = run_plain(tmp_path, source, "plain.py")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == [] and outcome.warnings == [], [str(d) for d in outcome.diagnoses]
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_checkpoint_sequential_on_data_is_reported_at_its_call(tmp_path):
    outcome = run_program(tmp_path, PRELUDE + """
h = checkpoint_sequential(block, 2, x, use_reentrant=True)  # CALL
head(h).sum().backward()  # BACKWARD
""")
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD301" and diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("CALL")
    assert diagnosis.related[0].line == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "h = checkpoint_sequential(block, 2, x, use_reentrant=False)"


def test_the_wrapper_is_removed_when_the_doctor_stops():
    before = CheckpointFunction.__dict__.get("apply")
    with autograd_doctor.watch():
        assert CheckpointFunction.__dict__.get("apply") is not before
    assert CheckpointFunction.__dict__.get("apply") is before
    block = torch.nn.Linear(2, 2)
    out = torch.utils.checkpoint.checkpoint(block, torch.randn(1, 2, requires_grad=True), use_reentrant=True)
    assert out.requires_grad
