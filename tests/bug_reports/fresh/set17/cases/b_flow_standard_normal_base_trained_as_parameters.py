"""A RealNVP density estimator whose base distribution is meant to be the standard Normal. The
flow builds it from its own tensors, `self.in_base_loc = nn.Parameter(torch.zeros(d))` and
`self.in_base_scale = nn.Parameter(torch.ones(d))`, and the optimizer is built from
`flow.parameters()`: the log-likelihood's gradient reaches the base's mean and scale, Adam moves
them, and the "standard" Normal drifts with training (the coupling layers learn a different
map than the model defines). Nothing is raised.
Source: https://github.com/deeprob-org/deeprob-kit/issues/22 ("On flows, mean and standard
deviation of default base distribution are not kept constant during training"; "probably due to
a wrong initialization of mean and standard deviation parameters"; fixed by creating them with
`requires_grad=False`, i.e. as constants the optimizer does not train).
expect: silent"""
import torch
import torch.nn as nn
from torch import distributions

torch.manual_seed(0)

DIM, LAYERS = 2, 4


class Coupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, 2 * DIM))

    def inverse(self, y):
        log_s, t = self.net(y * self.mask).chunk(2, dim=1)
        log_s = torch.tanh(log_s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return (y - t) * torch.exp(-log_s), -log_s.sum(1)


class RealNVP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Coupling(torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0]))
                                    for i in range(LAYERS))
        self.in_base_loc = nn.Parameter(torch.zeros(DIM))
        self.in_base_scale = nn.Parameter(torch.ones(DIM))
        self.in_base = distributions.Normal(self.in_base_loc, self.in_base_scale)

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in reversed(self.layers):
            x, ld = layer.inverse(x)
            log_det = log_det + ld
        return self.in_base.log_prob(x).sum(1) + log_det


def two_moons(n):
    angle = torch.rand(n) * torch.pi
    upper = torch.rand(n) < 0.5
    x = torch.where(upper, torch.cos(angle), 1 - torch.cos(angle))
    y = torch.where(upper, torch.sin(angle), 0.5 - torch.sin(angle))
    return torch.stack([x, y], dim=1) + 0.05 * torch.randn(n, 2)


flow = RealNVP()
optimizer = torch.optim.Adam(flow.parameters(), lr=5e-3)
losses = []
for step in range(40):
    loss = -flow(two_moons(128)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in flow.layers.parameters()],
          "base": torch.stack([flow.in_base_loc.detach(), flow.in_base_scale.detach()])}
