"""Variational posterior's sigma computed once from rho in __init__, never again.
Source: https://github.com/SaynaEbrahimi/UCB/issues/5 (compute sigma from rho where it is used)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VariationalPosterior(nn.Module):
    def __init__(self, mu, rho):
        super().__init__()
        self.mu = mu
        self.rho = rho
        self.normal = torch.distributions.Normal(0, 1)

    @property
    def sigma(self):
        return torch.log1p(torch.exp(self.rho))

    def sample(self):
        epsilon = self.normal.sample(self.rho.size())
        return self.mu + self.sigma * epsilon

    def log_prob(self, value):
        return (
            -math.log(math.sqrt(2 * math.pi)) - torch.log(self.sigma) - ((value - self.mu) ** 2) / (2 * self.sigma**2)
        ).sum()


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features, rho=-3.0):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features).normal_(0.0, 0.1))
        self.weight_rho = nn.Parameter(rho + torch.empty(out_features, in_features).normal_(0.0, 0.1))
        self.weight = VariationalPosterior(self.weight_mu, self.weight_rho)
        self.prior = torch.distributions.Normal(0.0, 1.0)

    def forward(self, x):
        weight = self.weight.sample()
        self.log_prior = self.prior.log_prob(weight).sum()
        self.log_variational_posterior = self.weight.log_prob(weight)
        return F.linear(x, weight)


layers = nn.ModuleList([BayesianLinear(6, 16), BayesianLinear(16, 3)])
optimizer = torch.optim.SGD(layers.parameters(), lr=0.05)
x = torch.randn(32, 6)
y = torch.randint(0, 3, (32,))
losses = []
for step in range(4):
    logits = layers[1](torch.relu(layers[0](x)))
    kl = sum(layer.log_variational_posterior - layer.log_prior for layer in layers)
    loss = 1e-3 * kl + F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(loss.detach())
result = {
    "losses": losses,
    "sigmas": [torch.log1p(torch.exp(layer.weight_rho.detach())) for layer in layers],
    "params": [p.detach().clone() for p in layers.parameters()],
}
