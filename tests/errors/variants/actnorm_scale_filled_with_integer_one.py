# message: Only Tensors of floating point and complex dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer_factory)
# set: 8
# trigger: a normalising flow's ActNorm layer initialises its log-scale and shift with
#   torch.full(..., 0) and torch.zeros; torch.full infers an integer dtype from the integer fill
#   value, and nn.Parameter asks for its gradient
# source: none found; the pattern as users write it (torch.full infers its dtype from fill_value)
# results: log_likelihoods, flow
import math

import torch
from torch import nn


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.log_scale = nn.Parameter(torch.full((channels,), 0))  # PRIMARY
        self.shift = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        z = (x - self.shift) * self.log_scale.exp()
        return z, self.log_scale.sum().expand(x.shape[0])


torch.manual_seed(0)
flow = ActNorm(3)
optimizer = torch.optim.SGD(flow.parameters(), lr=0.1)
x = torch.randn(16, 3) * 2 + 1
log_likelihoods = []
for _ in range(2):
    optimizer.zero_grad()
    z, log_det = flow(x)
    log_likelihood = (-0.5 * z.pow(2).sum(-1) - 1.5 * math.log(2 * math.pi) + log_det).mean()
    (-log_likelihood).backward()
    optimizer.step()
    log_likelihoods.append(log_likelihood.item())
