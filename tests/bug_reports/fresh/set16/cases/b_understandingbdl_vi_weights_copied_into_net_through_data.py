"""Mean-field variational inference for a small regression network (a Bayesian deep-learning
paper's 1-D regression experiment): the variational posterior has a mean `mu` and a softplus
scale for every weight; each forward samples `w = mu + eps * sigma` and writes the sample into
the base network with `param.data.copy_(w[offset:offset + n].view(param.size()))`, then runs the
network. The ELBO is the Gaussian negative log-likelihood plus the KL to the prior. A `.data`
copy is invisible to autograd: the likelihood's gradient reaches the base network's own
parameters (which the next forward overwrites) and never reaches `mu` or `sigma`, so the
variational parameters are trained by the KL term alone. Nothing is raised.
Source: https://github.com/izmailovpavel/understandingbdl/issues/8 ("the VI parameter \\mu does
not change if I compute only the NLL loss ... the VI model is only optimized based on the KL
term"; the author's fix, commit 5d10048, computes the layers from the sampled weights so that
the likelihood differentiates through the sample).
expect: silent"""
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
        offset = 0
        for param in self.base_model.parameters():
            param.data.copy_(w[offset:offset + param.numel()].view(param.size()))
            offset += param.numel()
        return self.base_model(x)

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
