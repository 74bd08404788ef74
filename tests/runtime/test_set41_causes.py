"""Held-out set 41's causes (docs/bug-reports.md, "Set 41"). The other shapes below were written
before the changes were run on them.

- AD112, a tensor computed element by element from leaves of its own shape (`A = x * y`,
  pythonclear.com): the derivative of each element is asked for, and the lines after backward()
  read the tensor as the values it holds; the help reduces it only inside the call, not the variable.
- AD301, a distribution's `sample()` written in a helper method of a module (laserkelvin.github.io's
  Bayesian linear layer, `Normal(mu, sigma).sample()` built in place): the draw is named, and every
  such draw of the class is changed to `rsample()`.
- AD309, a hand-written gradient accumulation `p.grad += q.grad` into a `.grad` that is None
  (discuss.pytorch.org 192471, first-order MAML): the help starts the sum from zeros, as PyTorch's
  None gradient means."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_replacement, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET41 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set41")

# --- AD112: one output per input element, read after backward() --------------------------------

TRAJECTORY = """
    import torch

    t = torch.linspace(0.0, 2.0, 6, requires_grad=True)
    position = 0.5 * 9.81 * t ** 2 + 3.0 * t
    position.backward()  # BACKWARD
    velocity = t.grad.clone()
    heights = position.detach().clone()
    result = {"velocity": velocity, "heights": heights}
"""

TRAJECTORY_BY_HAND = TRAJECTORY.replace("position.backward()", "position.backward(torch.ones_like(position))")

# A loss per element of a model's parameter, logged after backward(): the variable itself is reduced
# (the rule of set 11, kept).
PARAMETER_LOSS_LOGGED = """
    import torch
    from torch import nn

    w = nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    target = torch.tensor([0.0, 1.0, 2.0])
    optimizer = torch.optim.SGD([w], lr=0.1)
    history = []
    for step in range(3):
        optimizer.zero_grad()
        loss = (w - target) ** 2
        loss.backward()  # BACKWARD
        optimizer.step()
        history.append(loss.detach())
    result = {"history": torch.stack(history), "w": w.detach().clone()}
"""

# --- AD301: sample() in a helper method of a module -----------------------------------------------

STOCHASTIC_POLICY = """
    import torch
    import torch.nn as nn

    torch.manual_seed(5)


    class GaussianPolicy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 16)
            self.mean = nn.Linear(16, 2)
            self.log_std = nn.Parameter(torch.zeros(2))

        def act(self, mu):
            dist = torch.distributions.Normal(mu, self.log_std.exp())
            return dist.sample()  # DRAW

        def forward(self, state):
            return self.act(self.mean(torch.tanh(self.body(state))))


    policy = GaussianPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    states = torch.randn(32, 4)
    goal = torch.tensor([1.0, -1.0])
    for step in range(3):
        optimizer.zero_grad()
        action = policy(states)
        loss = ((action - goal) ** 2).mean()
        loss.backward()
        optimizer.step()
    result = {"params": [p.detach().clone() for p in policy.parameters()]}
"""

STOCHASTIC_POLICY_BY_HAND = STOCHASTIC_POLICY.replace("return dist.sample()", "return dist.rsample()")

# A categorical draw in a helper has no rsample(): no rsample help.
CATEGORICAL_POLICY = STOCHASTIC_POLICY.replace(
    "dist = torch.distributions.Normal(mu, self.log_std.exp())",
    "dist = torch.distributions.Categorical(logits=mu)").replace(
    "loss = ((action - goal) ** 2).mean()", "loss = ((action.float() - goal[0]) ** 2).mean()")

# --- AD309: p.grad += q.grad into a None .grad --------------------------------------------------

WORKER_AVERAGE = """
    import copy

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(6)
    main = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(main.parameters(), lr=0.1)
    shards = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
    for step in range(3):
        optimizer.zero_grad()
        for xs, ys in shards:
            worker = copy.deepcopy(main)
            loss = F.mse_loss(worker(xs), ys)
            loss.backward()
            for p_main, p_worker in zip(main.parameters(), worker.parameters()):
                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE
        optimizer.step()
    result = {"params": [p.detach().clone() for p in main.parameters()]}
"""

WORKER_AVERAGE_BY_HAND = WORKER_AVERAGE.replace(
    "                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE",
    "                if p_main.grad is None:\n"
    "                    p_main.grad = torch.zeros_like(p_main)\n"
    "                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE")

# A weight decay added by hand to a parameter no loss uses: the .grad is None because the loss
# does not reach it, which zeros would hide: the advice stays.
DECAY_BY_HAND = """
    import torch
    import torch.nn as nn

    model = nn.Linear(3, 1)
    unused = nn.Parameter(torch.ones(3))
    loss = model(torch.randn(5, 3)).pow(2).mean()
    loss.backward()
    for p in [model.weight, unused]:
        p.grad += 0.01 * p  # DECAY
"""
