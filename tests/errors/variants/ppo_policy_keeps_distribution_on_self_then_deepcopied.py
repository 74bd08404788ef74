# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 31
# trigger: a PPO policy's forward builds its action distribution, torch.distributions.Normal(mean,
#   std), and keeps it on the module (self.dist, read by the entropy bonus); the old policy for the
#   next update's ratio is copy.deepcopy(policy) after an update
# source: none found; the pattern as users write it (the old-policy snapshot of PPO implementations)
# results: losses, policy
import copy

import torch
from torch import nn
from torch.distributions import Normal


class GaussianPolicy(nn.Module):
    def __init__(self, observation=3, action=2):
        super().__init__()
        self.mean = nn.Linear(observation, action)
        self.log_std = nn.Parameter(torch.zeros(action))

    def forward(self, observations):
        self.dist = Normal(self.mean(observations), self.log_std.exp())  # PRIMARY
        return self.dist

    def entropy(self):
        return self.dist.entropy().sum(-1).mean()


torch.manual_seed(0)
policy = GaussianPolicy()
optimizer = torch.optim.Adam(policy.parameters(), lr=0.01)
observations, actions, advantages = torch.randn(8, 3), torch.randn(8, 2), torch.randn(8)
old_policy = copy.deepcopy(policy)
losses = []
for _ in range(3):
    with torch.no_grad():
        old_log_prob = old_policy(observations).log_prob(actions).sum(-1)
    optimizer.zero_grad()
    ratio = (policy(observations).log_prob(actions).sum(-1) - old_log_prob).exp()
    loss = -(torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages)).mean() - 0.01 * policy.entropy()
    loss.backward()
    optimizer.step()
    old_policy = copy.deepcopy(policy)
    losses.append(loss.detach())
