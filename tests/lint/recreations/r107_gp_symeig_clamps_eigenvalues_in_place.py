"""GPyTorch: a lazy tensor's `_symeig` takes the symmetric eigendecomposition
of the kernel matrix and keeps the eigenvalues non-negative with
`evals.clamp_min_(0.0)`.  The eigendecomposition keeps its eigenvalues for
backward, so writing them in place breaks the gradient of anything computed
from them (the log-determinant of the marginal likelihood here); current
PyTorch raises "modified by an inplace operation".  The fix used the
out-of-place `clamp_min`.
Source: https://github.com/cornellius-gp/gpytorch/pull/1203"""
import math

import torch
import torch.nn as nn


class DenseLazyTensor:
    def __init__(self, tsr):
        self.tensor = tsr

    def evaluate(self):
        return self.tensor

    def _symeig(self, eigenvectors=False):
        evals, evecs = torch.linalg.eigh(self.evaluate())
        evals = evals.clamp_min_(0.0)  # missed: ADL001
        return evals, (evecs if eigenvectors else None)

    def logdet(self):
        evals, _ = self._symeig(eigenvectors=False)
        return evals.clamp_min(1e-10).log().sum()

    def inv_quad(self, rhs):
        return (rhs * torch.linalg.solve(self.evaluate(), rhs)).sum()


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))
        self.raw_outputscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        lengthscale = nn.functional.softplus(self.raw_lengthscale)
        outputscale = nn.functional.softplus(self.raw_outputscale)
        sq_dist = torch.cdist(x1 / lengthscale, x2 / lengthscale).pow(2)
        return outputscale * torch.exp(-0.5 * sq_dist)


class ExactMarginalLogLikelihood(nn.Module):
    def __init__(self, kernel, noise=0.1):
        super().__init__()
        self.kernel = kernel
        self.raw_noise = nn.Parameter(torch.tensor([math.log(math.expm1(noise))]))

    def forward(self, x, y):
        noise = nn.functional.softplus(self.raw_noise)
        covar = DenseLazyTensor(self.kernel(x, x) + noise * torch.eye(len(x)))
        n = len(y)
        return -0.5 * (covar.inv_quad(y) + covar.logdet() + n * math.log(2 * math.pi)) / n


def fit(x, y, steps=2):
    mll = ExactMarginalLogLikelihood(RBFKernel())
    optimizer = torch.optim.Adam(mll.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = -mll(x, y)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    x = torch.linspace(0, 1, 8).unsqueeze(-1)
    fit(x, torch.sin(6 * x).squeeze(-1))
