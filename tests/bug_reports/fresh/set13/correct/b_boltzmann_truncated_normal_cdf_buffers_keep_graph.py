"""bgflow's truncated normal prior whose CDF buffers are computed from detached bounds
(`cdf(alpha.detach())`, `cdf(beta.detach())`): every training step backpropagates its own graph.
Source: https://github.com/noegroup/bgflow/issues/14 (fixed in https://github.com/noegroup/bgflow/pull/15)."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class TruncatedNormalDistribution(nn.Module):
    def __init__(self, mu, sigma, lower_bound, upper_bound, is_learnable=False):
        super().__init__()
        if is_learnable:
            self._mu = nn.Parameter(mu)
            self._log_sigma = nn.Parameter(torch.log(sigma))
        else:
            self.register_buffer("_mu", mu)
            self.register_buffer("_log_sigma", torch.log(sigma))
        self.register_buffer("_lower_bound", lower_bound)
        self.register_buffer("_upper_bound", upper_bound)
        self._standard_normal = torch.distributions.Normal(0.0, 1.0)
        alpha = (self._lower_bound - self._mu) / self._sigma
        beta = (self._upper_bound - self._mu) / self._sigma
        self.register_buffer("_cdf_lower_bound", self._standard_normal.cdf(alpha.detach()))
        self.register_buffer("_cdf_upper_bound", self._standard_normal.cdf(beta.detach()))

    @property
    def _sigma(self):
        return self._log_sigma.exp()

    def energy(self, x):
        z = (x - self._mu) / self._sigma
        log_normalizer = torch.log(self._cdf_upper_bound - self._cdf_lower_bound)
        energy = 0.5 * z ** 2 + 0.5 * math.log(2 * math.pi) + torch.log(self._sigma) + log_normalizer
        return energy.sum(dim=-1, keepdim=True)


class AffineFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.shift = nn.Parameter(torch.zeros(dim))

    def inverse(self, y):
        x = (y - self.shift) * torch.exp(-self.log_scale)
        return x, -self.log_scale.sum().expand(y.shape[0], 1)


prior = TruncatedNormalDistribution(
    mu=torch.tensor([0.5, 0.5]), sigma=torch.tensor([1.0, 1.0]),
    lower_bound=torch.tensor([0.0, 0.0]), upper_bound=torch.tensor([1.0, 1.0]), is_learnable=True,
)
flow = AffineFlow(2)
optimizer = torch.optim.Adam(list(prior.parameters()) + list(flow.parameters()), lr=0.05)
data = torch.rand(64, 2) * 0.6 + 0.2

losses = []
for step in range(4):
    optimizer.zero_grad()
    x, dlogp = flow.inverse(data)
    loss = (prior.energy(x) - dlogp).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {
    "losses": torch.stack(losses),
    "prior": [p.detach().clone() for p in prior.parameters()],
    "flow": [p.detach().clone() for p in flow.parameters()],
}
