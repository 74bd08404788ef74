"""Realistic, correct training scripts (GPT-style transformer with checkpointing, EMA and
weight tying; a ResNet-style CNN; truncated BPTT) run silently and unchanged under the
doctor. They use in-place ops the way real code does: on fresh tensors, under no_grad, on
gradients, on spent outputs."""

import os

import pytest

from helpers import run_program

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs", "correct")


@pytest.mark.parametrize("name", sorted(os.listdir(PROGRAMS)))
def test_realistic_correct_program_is_silent(tmp_path, name):
    with open(os.path.join(PROGRAMS, name), encoding="utf-8") as stream:
        source = stream.read()
    outcome = run_program(tmp_path, source, name=name)
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == []
    assert outcome.warnings == []


def test_dqn_target_built_on_a_detach_alias(tmp_path):
    """Writing the TD target into q.detach() also overwrites q: the loss is silently zero."""
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 2)
        states, actions, rewards = torch.randn(3, 4), torch.tensor([0, 1, 0]), torch.ones(3)
        q = net(states)
        target = q.detach()  # ALIAS
        target[torch.arange(3), actions] = rewards  # WRITE
        loss = nn.functional.mse_loss(q, target)
        loss.backward()
        final_loss = loss.item()
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD205"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["alias"] == outcome.line("ALIAS")
    assert diagnosis.help[0].replacement == "target = q.detach().clone()"
    assert outcome.namespace["final_loss"] == 0.0
    from helpers import apply_help, run_plain

    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["final_loss"] > 0.0
