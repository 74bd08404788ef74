"""ADL032: a temporal-difference target (`reward + gamma * next_value`) whose next
value comes from the network the optimizer steps, not detached nor computed
under `torch.no_grad()`: the loss backpropagates through the target too.

Each buggy shape is found at the loss line and its update really differs from the
semi-gradient TD update (the target a constant); the change the message names
(detach the target), applied, gives exactly the semi-gradient update and the
linter is silent on it.  Correct near-twins (no_grad, `.detach()` on the next
value, a target network the optimizer does not step) stay silent."""

from __future__ import annotations

import sys

import torch

from autograd_doctor.lint.engine import lint_source

FUNCTION = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
q_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
target_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(q_net.parameters(), lr=0.1)


def update(s, a, r, s2, done, gamma=0.9):
    next_q = q_net(s2).max(1)[0]
    target = r + gamma * next_q * (1 - done)
    q = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    loss = F.mse_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

CLASS = """
import torch
import torch.nn as nn


class Critic:
    def __init__(self, discount=0.9):
        torch.manual_seed(0)
        self.critic = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        self.critic_target = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)
        self.discount = discount

    def train_step(self, state, action, reward, next_state, next_action, not_done):
        next_value = self.critic(torch.cat([next_state, next_action], 1))
        target_q = reward + not_done * self.discount * next_value
        current_q = self.critic(torch.cat([state, action], 1))
        critic_loss = (current_q - target_q).pow(2).mean()
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
"""


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def findings(source: str):
    return [f for f in lint_source(source) if f.code == "ADL032"]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _function_batch():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(6, 4, generator=g), torch.randint(0, 3, (6,), generator=g), torch.randn(6, generator=g),
            torch.randn(6, 4, generator=g), torch.zeros(6))


def _semi_gradient_function(module, batch):
    s, a, r, s2, done = batch
    with torch.no_grad():
        target = r + 0.9 * module.q_net(s2).max(1)[0] * (1 - done)
    q = module.q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    return torch.autograd.grad(torch.nn.functional.mse_loss(q, target), list(module.q_net.parameters()))


def _grads_after(module):
    return [p.grad.clone() for p in module.q_net.parameters()]


def test_function_shape_is_found_and_its_gradient_is_not_the_td_gradient():
    found = findings(FUNCTION)
    assert [f.line for f in found] == [line_of(FUNCTION, "loss = F.mse_loss(q, target)")]
    assert "target" in found[0].message and "detach" in found[0].message
    module = load(FUNCTION, "buggy_dqn")
    batch = _function_batch()
    expected = _semi_gradient_function(module, batch)
    module.optimizer.step = lambda: None  # keep the gradients for the oracle
    module.update(*batch)
    assert any(not torch.allclose(g, e) for g, e in zip(_grads_after(module), expected))


def test_function_shape_fixed_gives_the_td_gradient_and_is_silent():
    fixed = FUNCTION.replace("loss = F.mse_loss(q, target)", "loss = F.mse_loss(q, target.detach())")
    assert findings(fixed) == []
    module = load(fixed, "fixed_dqn")
    batch = _function_batch()
    expected = _semi_gradient_function(module, batch)
    module.optimizer.step = lambda: None
    module.update(*batch)
    assert all(torch.allclose(g, e) for g, e in zip(_grads_after(module), expected))


def test_class_shape_is_found_at_the_loss():
    found = findings(CLASS)
    assert [f.line for f in found] == [line_of(CLASS, "critic_loss = (current_q - target_q)")]


def test_class_shape_fixed_with_no_grad_is_silent_and_correct():
    fixed = CLASS.replace(
        "        next_value = self.critic(torch.cat([next_state, next_action], 1))\n"
        "        target_q = reward + not_done * self.discount * next_value\n",
        "        with torch.no_grad():\n"
        "            next_value = self.critic(torch.cat([next_state, next_action], 1))\n"
        "            target_q = reward + not_done * self.discount * next_value\n")
    assert fixed != CLASS and findings(fixed) == []
    g = torch.Generator().manual_seed(2)
    batch = [torch.randn(4, k, generator=g) for k in (4, 1, 1, 4, 1)] + [torch.ones(4, 1)]
    critic = load(fixed, "fixed_critic").Critic()
    critic.critic_optimizer.step = lambda: None
    critic.train_step(*batch)
    state, action, reward, next_state, next_action, not_done = batch
    with torch.no_grad():
        target = reward + not_done * 0.9 * critic.critic(torch.cat([next_state, next_action], 1))
    loss = (critic.critic(torch.cat([state, action], 1)) - target).pow(2).mean()
    expected = torch.autograd.grad(loss, list(critic.critic.parameters()))
    assert all(torch.allclose(p.grad, e) for p, e in zip(critic.critic.parameters(), expected))


def test_correct_near_twins_are_silent():
    twins = {
        "detach_next": FUNCTION.replace("next_q = q_net(s2).max(1)[0]", "next_q = q_net(s2).max(1)[0].detach()"),
        "target_network": FUNCTION.replace("next_q = q_net(s2).max(1)[0]", "next_q = target_net(s2).max(1)[0]"),
        "double_dqn_index_only": FUNCTION.replace(
            "next_q = q_net(s2).max(1)[0]",
            "best = q_net(s2).argmax(1, keepdim=True)\n    next_q = target_net(s2).gather(1, best).squeeze(1)"),
        "class_target_network": CLASS.replace("next_value = self.critic(", "next_value = self.critic_target("),
        "class_detached_target": CLASS.replace("(current_q - target_q)", "(current_q - target_q.detach())"),
    }
    for name, source in twins.items():
        assert source not in (FUNCTION, CLASS), name
        assert findings(source) == [], name


def test_a_loss_weighted_by_gamma_is_not_a_target():
    source = """
import torch
import torch.nn as nn

model, critic = nn.Linear(3, 2), nn.Linear(2, 2)
optimizer = torch.optim.Adam(model.parameters())


def step(x, gamma=6.0):
    z = model(x)
    d = critic(z)
    loss = (z - x[:, :2]).pow(2).mean() + gamma * (d[:, 0] - d[:, 1]).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert findings(source) == []
