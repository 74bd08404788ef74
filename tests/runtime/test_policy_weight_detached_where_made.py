"""AD226 where the policy-gradient weight is a name made only for the product
(`advantage = reward - value`, then `-log_prob * advantage`; held-out set 19: the actor-critic
whose advantage carries the value head's graph into the policy loss). The line that made the
carried name is the primary location and the help detaches it there; the product stays in the
report. A name the critic's own loss also reads keeps the older help (detach it in the product),
since detaching it where it is made would stop the critic's training. Confirmed on two programs of
another shape (a batched A2C update with `adv = returns - values` in a function, a per-step TD
actor-critic that appends `delta * -log_prob`), each help applied equal to a hand-written version."""

import torch

from helpers import marked_line, apply_help, run_plain, run_program

BATCHED = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
body = torch.nn.Linear(4, 16)
policy_head, value_head = torch.nn.Linear(16, 3), torch.nn.Linear(16, 1)
params = list(body.parameters()) + list(policy_head.parameters()) + list(value_head.parameters())
opt = torch.optim.Adam(params, lr=1e-3)
states, actions, returns = torch.randn(10, 4), torch.randint(0, 3, (10,)), torch.randn(10)


def update():
    hidden = torch.relu(body(states))
    log_probs = torch.distributions.Categorical(logits=policy_head(hidden)).log_prob(actions)
    values = value_head(hidden).squeeze(1)
    adv = returns - values  # MADE
    policy_loss = -(log_probs * adv).mean()
    value_loss = F.mse_loss(values, returns)
    opt.zero_grad()
    (policy_loss + 0.5 * value_loss).backward()
    opt.step()
    return policy_loss.detach()


losses = torch.stack([update() for _ in range(3)])
final = [p.detach().clone() for p in params]
"""
BATCHED_ANSWER = BATCHED.replace("    adv = returns - values  # MADE", "    adv = (returns - values).detach()")
# The critic's loss reads the same name: detaching it where it is made would stop the critic.
SHARED = BATCHED.replace("    value_loss = F.mse_loss(values, returns)", "    value_loss = adv.pow(2).mean()")

TD = """
import torch
torch.manual_seed(0)
actor, critic = torch.nn.Linear(3, 2), torch.nn.Linear(3, 1)
opt = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=1e-2)
states = torch.randn(6, 3)
rewards = [0.5, -1.0, 0.2, 0.0, 1.0]
actor_terms, critic_terms = [], []
for t in range(5):
    log_prob = torch.log_softmax(actor(states[t]), 0)[t % 2]
    value, next_value = critic(states[t]), critic(states[t + 1]).detach()
    delta = rewards[t] + 0.9 * next_value - value  # MADE
    actor_terms.append(delta * -log_prob)
    critic_terms.append((rewards[t] + 0.9 * next_value - value) ** 2)
opt.zero_grad()
(torch.stack(actor_terms).sum() + torch.stack(critic_terms).sum()).backward()
opt.step()
final = [p.detach().clone() for p in list(actor.parameters()) + list(critic.parameters())]
"""
TD_ANSWER = TD.replace("    delta = rewards[t] + 0.9 * next_value - value  # MADE",
                       "    delta = (rewards[t] + 0.9 * next_value - value).detach()")


def _ad226(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD226")


def test_batched_names_where_the_weight_is_made(tmp_path):
    outcome = run_program(tmp_path, BATCHED)
    diagnosis = _ad226(outcome)
    assert diagnosis.primary.line == marked_line(BATCHED, "MADE")
    assert diagnosis.help[0].replacement == "adv = (returns - values).detach()"
    fixed = run_plain(tmp_path, apply_help(outcome))
    expected = run_plain(tmp_path, BATCHED_ANSWER, "answer.py")
    assert torch.equal(fixed["losses"], expected["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["final"], expected["final"]))


def test_td_actor_critic_appended_terms(tmp_path):
    outcome = run_program(tmp_path, TD)
    diagnosis = _ad226(outcome)
    assert diagnosis.primary.line == marked_line(TD, "MADE")
    fixed = run_plain(tmp_path, apply_help(outcome))
    expected = run_plain(tmp_path, TD_ANSWER, "answer.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["final"], expected["final"]))


def test_a_weight_the_critic_loss_also_reads_keeps_the_help_in_the_product(tmp_path):
    outcome = run_program(tmp_path, SHARED)
    diagnosis = _ad226(outcome)
    assert diagnosis.primary.source.startswith("policy_loss = -(log_probs * adv).mean()")
    assert "adv.detach()" in diagnosis.help[0].replacement


def test_the_hand_written_versions_stay_silent(tmp_path):
    for source in (BATCHED_ANSWER, TD_ANSWER):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses
