"""leaf-audio-pytorch (LEAF learnable audio frontend): `GaborConv1D.forward`
passes its kernel parameter through `GaborConstraint`, whose forward clamps
the centre frequencies and bandwidths inside `with torch.no_grad():` before
building the Gabor filters.  The filters are built from the clamped copy, so
no gradient reaches the kernel: the reporter trained 100 steps and the kernel
never changed (no error).  Fix (PR 4): drop the `torch.no_grad()` block.
Re-created as the constraint, the complex Gabor convolution and a toy
training loop; `bug_shows()` is True when the kernel gets no gradient.
Buggy line: `with torch.no_grad():` in `GaborConstraint.forward`.
Source: https://github.com/denfed/leaf-audio-pytorch/issues/3"""
import math

import torch
import torch.nn as nn


class GaborConstraint(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self._kernel_size = kernel_size

    def forward(self, kernel):
        mu_lower, mu_upper = 0.0, math.pi
        sigma_lower = 4 * math.sqrt(2 * math.log(2)) / math.pi
        sigma_upper = self._kernel_size * math.sqrt(2 * math.log(2)) / math.pi
        with torch.no_grad():  # missed: no rule (a parameter transformed under no_grad() inside forward: no gradient reaches it)
            clipped_mu = torch.clamp(kernel[:, 0], mu_lower, mu_upper).unsqueeze(1)
            clipped_sigma = torch.clamp(kernel[:, 1], sigma_lower, sigma_upper).unsqueeze(1)
        return torch.cat([clipped_mu, clipped_sigma], dim=-1)


def gabor_filters(kernel, size):
    t = torch.arange(-(size // 2), (size + 1) // 2, dtype=kernel.dtype)
    mu, sigma = kernel[:, 0:1], kernel[:, 1:2]
    denominator = 1.0 / (math.sqrt(2 * math.pi) * sigma)
    gaussian = torch.exp(-t ** 2 / (2 * sigma ** 2))
    return denominator * gaussian * torch.cos(mu * t), denominator * gaussian * torch.sin(mu * t)


class GaborConv1D(nn.Module):
    def __init__(self, filters=4, kernel_size=9):
        super().__init__()
        self._kernel_size = kernel_size
        init = torch.stack([torch.linspace(0.3, 2.5, filters), torch.full((filters,), 2.0)], dim=1)
        self._kernel = nn.Parameter(init)
        self._constraint = GaborConstraint(kernel_size)

    def forward(self, x):
        kernel = self._constraint(self._kernel)
        real, imag = gabor_filters(kernel, self._kernel_size)
        weight = torch.cat([real, imag], dim=0).unsqueeze(1)
        out = nn.functional.conv1d(x, weight, padding=self._kernel_size // 2)
        return out.pow(2)


class Leaf(nn.Module):
    """The frontend: complex Gabor convolution, then a learnable compression."""

    def __init__(self, filters=4):
        super().__init__()
        self._complex_conv = GaborConv1D(filters)
        self._compression = nn.Parameter(torch.full((2 * filters, 1), 0.5))

    def forward(self, x):
        return (self._complex_conv(x) + 1e-6).pow(self._compression)


def bug_shows():
    torch.manual_seed(0)
    frontend = Leaf()
    opt = torch.optim.Adam(frontend.parameters(), lr=0.002)
    x = torch.rand(1, 1, 64)
    kernel = frontend._complex_conv._kernel
    before = kernel.detach().clone()
    for _ in range(5):
        b = frontend(x)
        loss = torch.norm((b - torch.ones_like(b)).view(1, -1), p=2, dim=-1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return kernel.grad is None and torch.equal(before, kernel.detach())
