"""Mean-field variational inference with the network run on the sampled weights themselves
(`functional_call` with the slices of `w`), so that the likelihood trains `mu` and `sigma`.
Source: https://github.com/izmailovpavel/understandingbdl/issues/8 (fix: commit 5d10048)."""
import math

import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)

NOISE_VAR, PRIOR_LOG_SIGMA, INIT_SIGMA, POINTS = 0.05, math.log(10.0), 0.05, 40


def featurize(x):
    return torch.cat([x[:, None], x[:, None] ** 2], dim=1)


class VIFFGModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.base_model = nn.Sequential(nn.Linear(2, 10), nn.ReLU(), nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 1))
        self.rank = sum(p.numel() for p in self.base_model.parameters())
        self.mu = nn.Parameter(torch.cat([p.detach().reshape(-1) for p in self.base_model.parameters()]))
        self.inv_softplus_sigma = nn.Parameter(torch.full((self.rank,), math.log(math.exp(INIT_SIGMA) - 1.0)))

    def forward(self, x):
        sigma = nn.functional.softplus(self.inv_softplus_sigma) + 1e-6
        w = self.mu + torch.randn(self.rank) * sigma
        offset, weights = 0, {}
        for name, param in self.base_model.named_parameters():
            weights[name] = w[offset:offset + param.numel()].view(param.size())
            offset += param.numel()
        return functional_call(self.base_model, weights, (x,))

    def compute_kl(self):
        sigma = nn.functional.softplus(self.inv_softplus_sigma) + 1e-6
        kl = torch.sum(PRIOR_LOG_SIGMA - torch.log(sigma) + 0.5 * sigma ** 2 / math.exp(2 * PRIOR_LOG_SIGMA))
        return kl + 0.5 * torch.sum(self.mu ** 2) / math.exp(2 * PRIOR_LOG_SIGMA)


x = torch.linspace(-1.0, 1.0, POINTS)
y = (torch.sin(3 * x) + 0.1 * torch.randn(POINTS)).unsqueeze(1)
vi_model = VIFFGModel()
optimizer = torch.optim.Adam(vi_model.parameters(), lr=1e-2)
losses = []
for step in range(8):
    preds = vi_model(featurize(x))
    nll = ((preds - y) ** 2).sum() / (2 * NOISE_VAR)
    loss = (nll + vi_model.compute_kl()) / POINTS
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "mu": vi_model.mu.detach().clone(),
          "sigma": vi_model.inv_softplus_sigma.detach().clone()}
