"""Normalizing flow (wolf): an affine coupling layer splits its network's output with `chunk` into
`mu` and `log_scale`, and computes the scale in place on the chunk to save memory
(`log_scale.mul_(0.5).tanh_()`). The chunk is a view of the network's output; the write fails.
Source: https://github.com/XuezheMax/wolf/pull/1 ("one of the variables needed for gradient
computation has been modified by an inplace operation" on PyTorch 1.7; the maintainer's answer:
compute the scale out of place, `log_scale.mul(0.5).tanh().mul(self.alpha).add(1.0)`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
DIM = 4


class AffineCoupling(nn.Module):
    def __init__(self, dim, alpha=1.0):
        super().__init__()
        self.alpha = alpha
        self.net = nn.Sequential(nn.Linear(dim // 2, 16), nn.ELU(), nn.Linear(16, dim))

    def calc_params(self, params):
        mu, log_scale = params.chunk(2, dim=1)
        scale = log_scale.mul_(0.5).tanh_().mul(self.alpha).add(1.0)
        return mu, scale

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        mu, scale = self.calc_params(self.net(x1))
        z2 = (x2 + mu) * scale
        return torch.cat([z2, x1], dim=1), scale.abs().log().sum(dim=1)


flow = nn.ModuleList([AffineCoupling(DIM), AffineCoupling(DIM)])
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
prior = torch.distributions.Normal(0.0, 1.0)
data = torch.randn(32, DIM) * torch.tensor([1.0, 0.5, 2.0, 1.5]) + 0.3

losses = []
for step in range(3):
    z, logdet = data, torch.zeros(data.shape[0])
    for layer in flow:
        z, layer_logdet = layer(z)
        logdet = logdet + layer_logdet
    nll = -(prior.log_prob(z).sum(dim=1) + logdet).mean()
    optimizer.zero_grad()
    nll.backward()
    optimizer.step()
    losses.append(nll.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in flow.parameters()]}
