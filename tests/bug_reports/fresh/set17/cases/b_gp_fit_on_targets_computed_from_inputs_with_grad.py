"""Bayesian optimisation: an exact Gaussian-process surrogate (RBF kernel, learned lengthscale,
output scale and noise) is fitted by maximising the marginal log-likelihood with Adam. The
training inputs come out of an earlier differentiable step and still require grad, and the
objective and constraint values are computed from them, so the training targets carry a graph.
Every evaluation of the marginal likelihood reads the targets; the first `loss.backward()`
frees their graph, and the second fitting iteration raises "Trying to backward through the
graph a second time (or directly access saved tensors after they have already been freed)".
Source: https://github.com/meta-pytorch/botorch/issues/2253 ("Fitting gpytorch model fails when
the training data has requires_grad=True": `train_obj = 3*train_x + train_x**2` from a
`train_x` made with `requires_grad=True`, then `fit_gpytorch_mll` fails with the second-backward
error; the training data given to the model must not carry a graph, `.detach()` it).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class ExactGP(nn.Module):
    def __init__(self, train_x, train_y):
        super().__init__()
        self.train_x = train_x
        self.train_y = train_y
        self.log_lengthscale = nn.Parameter(torch.zeros(()))
        self.log_outputscale = nn.Parameter(torch.zeros(()))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def kernel(self, a, b):
        sq_dist = torch.cdist(a, b) ** 2
        return self.log_outputscale.exp() * torch.exp(-0.5 * sq_dist / self.log_lengthscale.exp() ** 2)

    def marginal_log_likelihood(self):
        n = self.train_x.shape[0]
        y = (self.train_y - self.train_y.mean()) / self.train_y.std()
        cov = self.kernel(self.train_x, self.train_x) + self.log_noise.exp() * torch.eye(n)
        chol = torch.linalg.cholesky(cov)
        alpha = torch.cholesky_solve(y[:, None], chol)
        return -0.5 * (y[:, None] * alpha).sum() - torch.log(torch.diagonal(chol)).sum() - 0.5 * n * math.log(2 * math.pi)


train_x = torch.rand(24, 3, requires_grad=True)
train_obj = (3 * train_x + train_x ** 2).sum(dim=1)
train_con = (4 * train_x - train_x ** 3).sum(dim=1)

models = [ExactGP(train_x, train_obj), ExactGP(train_x, train_con)]
optimizer = torch.optim.Adam([p for m in models for p in m.parameters()], lr=0.05)
losses = []
for iteration in range(30):
    optimizer.zero_grad()
    loss = -sum(m.marginal_log_likelihood() for m in models) / len(models)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for m in models for p in m.parameters()]}
