"""deepdow's `Resample` allocation layer (Michaud resampling around a Markowitz optimiser): the
network predicts a covariance matrix, the layer draws returns from `MultivariateNormal(loc,
covariance_matrix=covmat)` with `dist.sample((n_draws,))`, re-estimates the covariance from the
draws and averages the minimum-variance portfolios. `sample()` draws outside the graph, so the
portfolio weights no longer depend on the predicted covariance: the Sharpe-ratio loss has no
gradient and `loss.backward()` raises "element 0 of tensors does not require grad and does not have
a grad_fn".
Source: https://github.com/jankrepl/deepdow/pull/106 ("Fix rsample bug", closes #101: "The `sample`
function makes it impossible to compute the gradients, used `rsample` instead."; the diff changes
`draws = dist.sample((n_draws,))` to `draws = dist.rsample((n_draws,))`).
expect: raises"""
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal

torch.manual_seed(0)

N_ASSETS, LOOKBACK = 4, 10


def covariance_matrix(x):
    """Sample covariance of x, shape (n_samples, n_draws, n_assets) -> (n_samples, n_assets, n_assets)."""
    centred = x - x.mean(dim=1, keepdim=True)
    return centred.transpose(1, 2) @ centred / (x.shape[1] - 1)


def minimum_variance(covmat):
    """Analytical minimum-variance Markowitz weights, shape (n_samples, n_assets)."""
    ones = torch.ones(covmat.shape[0], covmat.shape[1], 1)
    w = torch.linalg.solve(covmat, ones).squeeze(-1)
    return w / w.sum(dim=1, keepdim=True)


class Resample(nn.Module):
    def __init__(self, n_draws=64, n_portfolios=3):
        super().__init__()
        self.n_draws, self.n_portfolios = n_draws, n_portfolios

    def forward(self, matrix):
        covmat = matrix @ matrix.transpose(1, 2) + 1e-3 * torch.eye(matrix.shape[-1])
        dist = MultivariateNormal(loc=torch.zeros(matrix.shape[0], matrix.shape[-1]), covariance_matrix=covmat)
        portfolios = []
        for _ in range(self.n_portfolios):
            draws = dist.rsample((self.n_draws,))  # (n_draws, n_samples, n_assets)
            covmat_ = covariance_matrix(draws.permute(1, 0, 2))
            portfolios.append(minimum_variance(covmat_))
        return torch.stack(portfolios, dim=0).mean(dim=0)


class Network(nn.Module):
    """Predicts the square root of the covariance matrix from a window of past returns."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(LOOKBACK * N_ASSETS, N_ASSETS * N_ASSETS)
        self.allocator = Resample()

    def forward(self, x):
        matrix = self.linear(x.flatten(1)).view(-1, N_ASSETS, N_ASSETS)
        return self.allocator(matrix)


network = Network()
optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)

past = torch.randn(8, LOOKBACK, N_ASSETS) * 0.02
future = torch.randn(8, 5, N_ASSETS) * 0.02

losses = []
for epoch in range(3):
    torch.manual_seed(epoch)
    weights = network(past)
    portfolio_returns = (future * weights.unsqueeze(1)).sum(-1)
    loss = -(portfolio_returns.mean(1) / (portfolio_returns.std(1) + 1e-6)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in network.parameters()]}
