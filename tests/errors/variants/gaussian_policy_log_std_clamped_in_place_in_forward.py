# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 24
# trigger: a Gaussian policy module keeps its log standard deviation as an nn.Parameter and, in
#   forward, bounds it with self.log_std.clamp_(-5.0, 1.0) before building torch.distributions.Normal;
#   one entry starts outside the bounds, so the clamp's value matters and its gradient is zero there
# source: none found; the pattern as users write it (SAC/PPO Gaussian heads bound log_std)
# results: policy.mean.weight, policy.log_std, losses
import os
import sys

import torch
from torch import nn
from torch.distributions import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Linear(3, 2)
        self.log_std = nn.Parameter(torch.tensor([-0.5, 1.6]))

    def forward(self, states):
        log_std = self.log_std.clamp_(-5.0, 1.0)  # PRIMARY
        return Normal(self.mean(states), log_std.exp())


torch.manual_seed(0)
policy = GaussianPolicy()
optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
states = torch.randn(6, 3)
actions = torch.randn(6, 2)
advantages = torch.linspace(-1.0, 1.0, 6)
losses = []
for step in range(3):
    dist = policy(states)
    loss = -(dist.log_prob(actions).sum(1) * advantages).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
