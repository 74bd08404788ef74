"""A Gaussian process fitted to function values and slopes (derivative observations) of a 1-D
signal. The kernel with gradients has a `diag()` used by a diagonal likelihood: the value part of
the diagonal is the output scale, the slope part is output scale / lengthscale**2. The diagonal
first scales the inputs by the lengthscale (`x / lengthscale`, which saves the lengthscale for
backward), then squares the lengthscale in place (`lengthscale.pow_(2)`) for the slope part, so
backward() finds the saved lengthscale modified: "one of the variables needed for gradient
computation has been modified by an inplace operation".
Source: https://github.com/cornellius-gp/gpytorch/issues/1389 ("[Bug] inplace operation in
RBFKernelGrad when diag=True": backward through the kernel's diagonal fails; fixed in
https://github.com/cornellius-gp/gpytorch/pull/1390 by replacing the in-place operation on the
lengthscale with an out-of-place one).
expect: raises"""
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
        slope_diag = outputscale / lengthscale.pow_(2) * torch.ones_like(x)
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
