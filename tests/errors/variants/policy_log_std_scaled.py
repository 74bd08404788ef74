# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 2
# trigger: a Gaussian policy class creates its log standard deviation as
#   torch.ones(..., requires_grad=True) * log(0.5) on self; the optimizer gets [self.mu, self.log_std]
# source: none found; the pattern as users write it
# results: policy.mu, policy.log_std
import math

import torch


class GaussianPolicy:
    def __init__(self, dim):
        self.mu = torch.zeros(dim, requires_grad=True)
        self.log_std = torch.ones(dim, requires_grad=True) * math.log(0.5)  # PRIMARY
        self.optimizer = torch.optim.Adam([self.mu, self.log_std], lr=0.05)

    def update(self, actions, advantages):
        dist = torch.distributions.Normal(self.mu, self.log_std.exp())
        loss = -(dist.log_prob(actions).sum(-1) * advantages).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


torch.manual_seed(0)
policy = GaussianPolicy(2)
for _ in range(3):
    policy.update(torch.randn(8, 2), torch.randn(8))
