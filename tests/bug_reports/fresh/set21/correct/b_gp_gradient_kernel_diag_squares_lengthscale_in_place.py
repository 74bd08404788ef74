"""A Gaussian process with slope observations whose kernel diagonal squares the lengthscale out
of place (`lengthscale.pow(2)`), so the lengthscale saved by `x / lengthscale` is unchanged.
Source: https://github.com/cornellius-gp/gpytorch/pull/1390."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RBFKernelWithSlopes(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.raw_outputscale = nn.Parameter(torch.tensor(0.0))

    def diag(self, x):
        lengthscale = F.softplus(self.raw_lengthscale)
        outputscale = F.softplus(self.raw_outputscale)
        x_scaled = x / lengthscale
        value_diag = outputscale * torch.exp(-0.5 * (x_scaled - x_scaled) ** 2)
        slope_diag = outputscale / lengthscale.pow(2) * torch.ones_like(x)
        return torch.cat([value_diag, slope_diag])


x = torch.linspace(0.0, 2.0 * math.pi, 16)
observations = torch.cat([torch.sin(2.0 * x), 2.0 * torch.cos(2.0 * x)])
observations = observations + 0.05 * torch.randn(observations.shape)

kernel = RBFKernelWithSlopes()
raw_noise = nn.Parameter(torch.tensor(-2.0))
optimizer = torch.optim.Adam(list(kernel.parameters()) + [raw_noise], lr=0.05)
losses = []
for step in range(10):
    variance = kernel.diag(x) + F.softplus(raw_noise)
    loss = 0.5 * (observations ** 2 / variance + variance.log()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in kernel.parameters()],
          "noise": raw_noise.detach().clone()}
