"""AD215: a loop that trains two models in turn leaves one frozen (`requires_grad(critic, False)`)
and later computes a penalty for it and steps its optimizer: the penalty reaches none of its
parameters and step() changes nothing, silently. The help switches the flag on again at the
start of the block that computes the penalty (held-out set 8, semanticGAN#25's R1 regularization).
--verify-fix runs such a program (its penalty calls `autograd.grad(outputs=..., inputs=...)` with
keywords, which the meaning check's capture of autograd.grad rejected before)."""

import torch

from helpers import apply_help, run_cli, run_plain, run_program

ALTERNATING = """
import torch
import torch.nn as nn
torch.manual_seed(0)
def requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad = flag
actor = nn.Linear(3, 2)
critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
actor_opt = torch.optim.SGD(actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
states, targets = torch.randn(6, 3), torch.randn(6, 1)
for it in range(3):
    requires_grad(critic, True)
    critic_loss = ((critic(actor(states).detach()) - targets) ** 2).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    requires_grad(critic, False)  # FREEZE
    actor_loss = -critic(actor(states)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    if it % 2 == 0:
        points = actor(states).detach().requires_grad_(True)  # FIRST
        grad, = torch.autograd.grad(outputs=critic(points).sum(), inputs=points, create_graph=True)
        critic_opt.zero_grad()
        (grad.pow(2).sum(1).mean() + 0 * critic(points).sum()).backward()
        critic_opt.step()  # STEP
params = [p.detach().clone() for p in [*actor.parameters(), *critic.parameters()]]
"""

ANSWER = ALTERNATING.replace("    if it % 2 == 0:\n", "    if it % 2 == 0:\n        requires_grad(critic, True)\n")


def test_the_frozen_step_is_reported_with_the_toggle_that_froze_it(tmp_path):
    outcome = run_program(tmp_path, ALTERNATING)
    reports = [d for d in outcome.diagnoses if d.code == "AD215"]
    assert reports  # warned once for this step line
    diagnosis = reports[0]
    assert diagnosis.primary.line == outcome.line("STEP")
    assert any(r.line == outcome.line("FREEZE") for r in diagnosis.related)
    first = diagnosis.help[0]
    assert first.location.line == outcome.line("FIRST")
    assert first.replacement.splitlines()[0] == "requires_grad(critic, True)"


def test_the_help_applied_trains_what_the_answer_trains(tmp_path):
    outcome = run_program(tmp_path, ALTERNATING)
    assert outcome.diagnosis.code == "AD215"
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, ALTERNATING, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


def test_the_answer_and_a_model_frozen_from_the_start_are_silent(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert not [d for d in outcome.diagnoses if d.code == "AD215"]
    # A module frozen before its optimizer ever applied a gradient: stepping it is a no-op on
    # purpose (a phase that trains only the rest), nothing was left switched off.
    frozen = ALTERNATING.replace("    requires_grad(critic, True)\n    critic_loss", "    critic_loss") \
        .replace("torch.manual_seed(0)\n", "torch.manual_seed(0)\nFROZEN = True\n")
    frozen = frozen.replace("for it in range(3):\n", "requires_grad(critic, False)\nfor it in range(3):\n")
    frozen = frozen.replace("    critic_loss = ((critic(actor(states).detach()) - targets) ** 2).mean()\n"
                            "    critic_opt.zero_grad()\n    critic_loss.backward()\n    critic_opt.step()\n", "")
    outcome = run_program(tmp_path, frozen)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD215"]


def test_verify_fix_runs_a_program_that_calls_autograd_grad_with_keywords(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(ALTERNATING)
    completed = run_cli("run", "--no-rerun", "--verify-fix", str(path), cwd=str(tmp_path), timeout=600)
    assert "TypeError" not in completed.stderr
    assert "applied 1 change(s)" in completed.stderr


def test_the_help_turns_on_only_the_flag_that_froze(tmp_path):
    # A toggle with a second False argument: the help switches the flag, not `verbose`.
    program = ALTERNATING.replace("def requires_grad(model, flag):", "def requires_grad(model, flag, verbose=False):") \
        .replace("requires_grad(critic, False)  # FREEZE", "requires_grad(critic, False, verbose=False)  # FREEZE")
    outcome = run_program(tmp_path, program)
    (diagnosis, *_) = [d for d in outcome.diagnoses if d.code == "AD215"]
    assert diagnosis.help[0].replacement.splitlines()[0] == "requires_grad(critic, True, verbose=False)"
