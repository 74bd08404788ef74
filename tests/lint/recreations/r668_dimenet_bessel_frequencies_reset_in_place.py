"""pytorch_geometric pull request 4424 ("Updates to dimenet model"): building
`DimeNet(hidden_channels=5, out_channels=19, num_blocks=1, ...)` raises "a leaf Variable that
requires grad is being used in an in-place operation" in `BesselBasisLayer.reset_parameters`:
the layer's frequencies are a `Parameter` (`self.freq = torch.nn.Parameter(torch.Tensor(num_radial))`)
and `reset_parameters` fills them with `torch.arange(1, num_radial + 1, out=self.freq).mul_(PI)`
outside `no_grad` (torch 2.13 stops one call earlier, at `arange(out=self.freq)`: "functions with out=... arguments
don't support automatic differentiation, but one of the arguments requires grad"). Re-created with the envelope, the Bessel basis layer, a small radial-basis
regressor around it and its training loop (the error comes at construction).
Buggy line: `torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)` in `reset_parameters`.
Source: https://github.com/pyg-team/pytorch_geometric/pull/4424"""
import math

import torch
import torch.nn as nn

PI = math.pi


class Envelope(nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.p = exponent + 1
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, x):
        p, a, b, c = self.p, self.a, self.b, self.c
        x_pow_p0 = x.pow(p - 1)
        x_pow_p1 = x_pow_p0 * x
        x_pow_p2 = x_pow_p1 * x
        return 1.0 / x + a * x_pow_p0 + b * x_pow_p1 + c * x_pow_p2


class BesselBasisLayer(nn.Module):
    def __init__(self, num_radial, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)
        self.freq = nn.Parameter(torch.empty(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)  # missed: ADL014 (writes a Parameter in place outside no_grad)

    def forward(self, dist):
        dist = dist.unsqueeze(-1) / self.cutoff
        return self.envelope(dist) * (self.freq * dist).sin()


class RadialRegressor(nn.Module):
    def __init__(self, num_radial=6, hidden=8):
        super().__init__()
        self.rbf = BesselBasisLayer(num_radial)
        self.mlp = nn.Sequential(nn.Linear(num_radial, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, dist):
        return self.mlp(self.rbf(dist)).squeeze(-1)


def train(steps=3):
    torch.manual_seed(0)
    model = RadialRegressor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        dist = torch.rand(16) * 4 + 0.5
        loss = ((model(dist) - torch.exp(-dist)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


run = train


if __name__ == "__main__":
    train()
