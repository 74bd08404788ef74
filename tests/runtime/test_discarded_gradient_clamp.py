"""AD222: gradient clipping written with the out-of-place clamp on a line of its own
(`param.grad.data.clamp(-1, 1)`, held-out set 11's DQN tutorial, pytorch/tutorials#30): the clipped
copy is thrown away and step() applies the unclipped gradients. Reported only when a gradient the
optimizer applies lies outside the bounds; the help clips in place and trains as the answer does."""

import torch

from helpers import apply_help, run_plain, run_program

ACTOR = """
import torch
import torch.nn as nn
torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=0.05)
states = torch.randn(12, 3) * 30
actions = torch.randint(0, 2, (12,))
returns = torch.randn(12) * 50

def update():
    log_probs = torch.log_softmax(policy(states), dim=1)
    loss = -(log_probs[torch.arange(12), actions] * returns).mean()
    optimizer.zero_grad()
    loss.backward()
    for p in policy.parameters():
        p.grad.clip(min=-0.5, max=0.5)  # CLIP
    optimizer.step()  # STEP

for step in range(3):
    update()
params = [p.detach().clone() for p in policy.parameters()]
"""

ANSWER = ACTOR.replace("p.grad.clip(min=-0.5, max=0.5)  # CLIP", "p.grad.clip_(min=-0.5, max=0.5)")


def test_the_thrown_away_clamp_is_named_with_the_in_place_help(tmp_path):
    outcome = run_program(tmp_path, ACTOR)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD222")
    assert diagnosis.primary.line == outcome.line("CLIP")
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("outside [-0.5, 0.5]" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.strip() == "p.grad.clip_(min=-0.5, max=0.5)"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, ACTOR)
    assert outcome.diagnosis.code == "AD222"
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    buggy = run_plain(tmp_path, ACTOR, name="buggy.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))  # the clipping matters here


def test_silent_when_the_clip_is_in_place_or_a_library_call(tmp_path):
    assert not [d for d in run_program(tmp_path, ANSWER).diagnoses if d.code == "AD222"]
    library = ACTOR.replace("    for p in policy.parameters():\n        p.grad.clip(min=-0.5, max=0.5)  # CLIP\n",
                            "    torch.nn.utils.clip_grad_value_(policy.parameters(), 0.5)\n")
    assert not [d for d in run_program(tmp_path, library, name="library.py").diagnoses if d.code == "AD222"]


def test_silent_when_no_gradient_lies_outside_the_bounds(tmp_path):
    # No evidence that the statement was meant to change anything at run time: nothing is said.
    wide = ACTOR.replace("p.grad.clip(min=-0.5, max=0.5)", "p.grad.clip(min=-1e9, max=1e9)")
    assert not [d for d in run_program(tmp_path, wide).diagnoses if d.code == "AD222"]
