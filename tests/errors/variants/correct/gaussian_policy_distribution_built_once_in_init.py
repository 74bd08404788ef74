# message: Trying to backward through the graph a second time (or directly access saved tensors after
#   they have already been freed).
# code: AD302 (catalogue: backward_twice)
# set: 20
# trigger: a state-independent Gaussian exploration policy builds its torch.distributions.Normal once
#   in __init__ from its learned log standard deviation (scale=self.log_std.exp()), so every step's
#   log_prob goes through the same exp() node, whose graph the first backward() freed
# source: none found; the pattern as users write it (distributions cached on the policy)
# results: policy, losses
import os
import sys

import torch
from torch import nn
from torch.distributions import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class GaussianNoisePolicy(nn.Module):
    def __init__(self, actions):
        super().__init__()
        self.log_std = nn.Parameter(torch.zeros(actions))

    def log_prob(self, deviation):
        noise = Normal(torch.zeros_like(self.log_std), self.log_std.exp())  # PRIMARY
        return noise.log_prob(deviation).sum(-1)


torch.manual_seed(0)
policy = GaussianNoisePolicy(2)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
losses = []
for _ in range(3):
    deviation = torch.randn(16, 2) * 0.5
    returns = torch.randn(16)
    loss = -(policy.log_prob(deviation) * returns).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
