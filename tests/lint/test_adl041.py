"""ADL041: an actor's loss that detaches the critic's value of the actor's own action
(SAC / DDPG / TD3 actor updates).  The only path from the loss into the actor through
the critic is cut: the actor's gradient is that of the other terms alone (silent).

Each buggy shape is found at the loss line; the change the message names (drop the
detach), applied, gives actor gradients equal to those of the written-out objective
(computed here by hand with `torch.autograd.grad`) and the linter is then silent.
Correct near-twins stay silent: a sampled action (no reparameterisation) with a
detached advantage in a likelihood-ratio loss, a detached TD target, a detached value
only logged, a discrete SAC whose critic is not given the action, a loss stepped by an
optimizer over another module, and a detached baseline beside the undetached value."""

from __future__ import annotations

import torch

from autograd_doctor.lint.engine import Selection, lint_source
from autograd_doctor.lint.fixes import apply_edits

HEADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self, s=3, a=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(s + a, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], -1))

    def Q1(self, s, a):
        return self.net(torch.cat([s, a], -1))
"""

# the r691 shape: a reparameterised sample in the actor's own method, a function update
SAC_FUNCTION = HEADER + """

class Gaussian(nn.Module):
    def __init__(self, s=3, a=2):
        super().__init__()
        self.body = nn.Linear(s, 8)
        self.mu = nn.Linear(8, a)
        self.log_std = nn.Linear(8, a)

    def evaluate(self, s, z):
        h = torch.tanh(self.body(s))
        mu, std = self.mu(h), self.log_std(h).clamp(-4, 1).exp()
        a = torch.tanh(mu + std * z)
        logp = torch.distributions.Normal(mu, std).log_prob(mu + std * z).sum(-1, keepdim=True)
        return a, logp


def update(actor, q1, actor_opt, s, z, alpha=0.2):
    new_a, logp = actor.evaluate(s, z)
    q_new = q1(s, new_a)
    loss = (alpha * logp - q_new.detach()).mean()  # expect: ADL041
    actor_opt.zero_grad()
    loss.backward()
    grads = [p.grad.clone() for p in actor.parameters()]
    actor_opt.step()
    return grads


def objective(actor, q1, s, z, alpha=0.2):
    new_a, logp = actor.evaluate(s, z)
    return (alpha * logp - q1(s, new_a)).mean()


def build():
    torch.manual_seed(0)
    actor, q1 = Gaussian(), Critic()
    return actor, q1, torch.optim.SGD(actor.parameters(), lr=0.1), torch.randn(5, 3), torch.randn(5, 2)


def run():
    actor, q1, opt, s, z = build()
    return update(actor, q1, opt, s, z)


def expected():
    actor, q1, opt, s, z = build()
    return list(torch.autograd.grad(objective(actor, q1, s, z), list(actor.parameters())))
"""

# DDPG: the critic's value of the actor's deterministic action, detached inline
DDPG = HEADER + """

torch.manual_seed(1)
actor = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
critic = Critic()
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
states = torch.randn(6, 3)


def run():
    actor_loss = -critic(states, actor(states)).detach().mean()  # expect: ADL041
    actor_optimizer.zero_grad()
    actor_loss.backward()
    grads = [p.grad.clone() for p in actor.parameters()]
    actor_optimizer.step()
    return grads


def expected():  # called before run(), which steps the actor
    return list(torch.autograd.grad(-critic(states, actor(states)).mean(), list(actor.parameters())))
"""

# written before the rule ran on it: a TD3 agent class, `.data` of the critic's first
# head bound to a name, the loss built from the name in the next statement
TD3 = HEADER + """

class TD3:
    def __init__(self):
        torch.manual_seed(2)
        self.actor = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
        self.critic = Critic()
        self.critic_target = Critic()
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def train(self, state, action, reward, next_state, discount=0.99):
        with torch.no_grad():
            target_q = reward + discount * self.critic_target(next_state, self.actor(next_state))
        current_q = self.critic(state, action)
        critic_loss = F.mse_loss(current_q, target_q)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        q_pi = self.critic.Q1(state, self.actor(state)).data
        actor_loss = -q_pi.mean()  # expect: ADL041
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        grads = [p.grad.clone() for p in self.actor.parameters()]
        self.actor_optimizer.step()
        return grads


def batch():
    torch.manual_seed(3)
    return torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1), torch.randn(4, 3)


def run():
    return TD3().train(*batch())


def expected():
    agent = TD3()
    state, action, reward, next_state = batch()
    # the critic's own step first, as in train()
    with torch.no_grad():
        target_q = reward + 0.99 * agent.critic_target(next_state, agent.actor(next_state))
    critic_loss = F.mse_loss(agent.critic(state, action), target_q)
    agent.critic_optimizer.zero_grad()
    critic_loss.backward()
    agent.critic_optimizer.step()
    objective = -agent.critic.Q1(state, agent.actor(state)).mean()
    return list(torch.autograd.grad(objective, list(agent.actor.parameters())))
"""

BUGGY = {"sac_function": SAC_FUNCTION, "ddpg": DDPG, "td3_data": TD3}

# near-twins: correct code that detaches a value of the critic on purpose
SAMPLED_ADVANTAGE = HEADER + """

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(3, 2)

    def forward(self, s):
        return torch.distributions.Normal(self.mu(s), 1.0)


def update(policy, critic, value, policy_opt, s):
    dist = policy(s)
    a = dist.sample()
    q = critic(s, a)
    advantage = q.detach() - value(s).detach()
    loss = -(dist.log_prob(a).sum(-1, keepdim=True) * advantage).mean()
    policy_opt.zero_grad()
    loss.backward()
    policy_opt.step()
"""

DETACHED_TD_TARGET = HEADER + """

def update(actor, critic, critic_target, actor_target, critic_opt, actor_opt, s, a, r, s2, gamma=0.99):
    target = r + gamma * critic_target(s2, actor_target(s2)).detach()
    critic_loss = F.mse_loss(critic(s, a), target)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_loss = -critic(s, actor(s)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
"""

SAC_TD_TARGET_WITH_CURRENT_ACTOR = HEADER + """

class Agent:
    def __init__(self, actor, q, q_target):
        self.actor, self.q, self.q_target = actor, q, q_target
        self.q_optimizer = torch.optim.Adam(self.q.parameters())
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters())

    def update(self, s, a, r, s2, alpha=0.2, gamma=0.99):
        a2, logp2 = self.actor.sample(s2)
        target = (r + gamma * (self.q_target(s2, a2) - alpha * logp2)).detach()
        q_loss = (self.q(s, a) - target).pow(2).mean()
        self.q_optimizer.zero_grad()
        q_loss.backward()
        self.q_optimizer.step()
        pi, logp = self.actor.sample(s)
        actor_loss = (alpha * logp - self.q(s, pi)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
"""

LOGGED = HEADER + """

def update(actor, critic, actor_opt, s, log):
    q = critic(s, actor(s))
    log["q"] = q.detach().mean().item()
    loss = -q.mean()
    actor_opt.zero_grad()
    loss.backward()
    actor_opt.step()
"""

DISCRETE_SAC = """
import torch
import torch.nn as nn


def update(actor, critic, actor_opt, s, alpha=0.2):
    probs = torch.softmax(actor(s), -1)
    log_probs = torch.log(probs + 1e-8)
    q = critic(s)
    loss = (probs * (alpha * log_probs - q.detach())).sum(-1).mean()
    actor_opt.zero_grad()
    loss.backward()
    actor_opt.step()
"""

OTHER_OPTIMIZER = HEADER + """

class Agent:
    def __init__(self, actor, selector, critic):
        self.actor, self.selector, self.critic = actor, selector, critic
        self.selector_optim = torch.optim.Adam(self.selector.parameters())
        self.actor_optim = torch.optim.Adam(self.actor.parameters())

    def update(self, s, alpha=0.2):
        logp_k = torch.log_softmax(self.selector(s), -1)[:, :1]
        pi = self.actor(s)
        q_pi = self.critic(s, pi)
        selector_loss = (alpha * logp_k - q_pi.detach()).mean()
        self.selector_optim.zero_grad()
        selector_loss.backward()
        self.selector_optim.step()
        actor_loss = -q_pi.mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
"""

BASELINE_BESIDE_VALUE = HEADER + """

def update(actor, critic, actor_opt, s):
    q = critic(s, actor(s))
    loss = -(q - q.detach().mean()).mean()
    actor_opt.zero_grad()
    loss.backward()
    actor_opt.step()
"""

SILENT = {"sampled_advantage": SAMPLED_ADVANTAGE, "detached_td_target": DETACHED_TD_TARGET,
          "sac_td_target_with_current_actor": SAC_TD_TARGET_WITH_CURRENT_ACTOR, "logged": LOGGED,
          "discrete_sac": DISCRETE_SAC, "other_optimizer": OTHER_OPTIMIZER,
          "baseline_beside_value": BASELINE_BESIDE_VALUE}

SELECT = Selection(select=("ADL041",))


def _expected_lines(source):
    return {i for i, line in enumerate(source.splitlines(), 1) if "# expect: ADL041" in line}


def _namespace(source, name):
    namespace = {"__name__": f"adl041_{name}"}
    exec(compile(source, f"<adl041_{name}>", "exec"), namespace)
    return namespace


def test_buggy_shapes_found_at_the_loss_line():
    for name, source in BUGGY.items():
        findings = lint_source(source, f"{name}.py", SELECT)
        assert {f.line for f in findings} == _expected_lines(source), name
        assert all(f.code == "ADL041" for f in findings)
        message = findings[0].message
        assert "detached" in message and "actor" in message and ("`.detach()`" in message or "`.data`" in message)


def test_the_bug_really_cuts_the_actor_gradient():
    for name, source in BUGGY.items():
        ns = _namespace(source, name)
        right = ns["expected"]()
        try:
            buggy = ns["run"]()
        except RuntimeError as error:  # DDPG, TD3: no other term, the loss has no graph at all
            assert "does not require grad" in str(error), name
            continue
        assert any(not torch.allclose(a, b) for a, b in zip(buggy, right)), name  # SAC: the entropy term's alone


def test_fix_applied_gives_the_written_out_objective_gradient_and_silence():
    for name, source in BUGGY.items():
        findings = lint_source(source, f"{name}.py", SELECT)
        assert findings and all(f.fix is not None and not f.fix.safe for f in findings), name
        fixed, applied = apply_edits(source, findings, unsafe=True)
        assert applied == len(findings)
        assert ".detach()).mean()  # expect" not in fixed
        assert lint_source(fixed, f"{name}.py", SELECT) == []
        ns = _namespace(fixed, name + "_fixed")
        right = ns["expected"]()
        got = ns["run"]()
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, right)), name


def test_no_safe_fix_is_offered():
    for name, source in BUGGY.items():
        fixed, applied = apply_edits(source, lint_source(source, f"{name}.py", SELECT), unsafe=False)
        assert applied == 0 and fixed == source


def test_near_twins_stay_silent():
    for name, source in SILENT.items():
        assert lint_source(source, f"{name}.py", SELECT) == [], name
        _namespace(source, name)  # each is a valid program


def test_default_selection_finds_it():
    assert [f.code for f in lint_source(DDPG, "ddpg.py") if f.code == "ADL041"] == ["ADL041"]
