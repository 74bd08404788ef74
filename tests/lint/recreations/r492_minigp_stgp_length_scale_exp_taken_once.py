"""MiniGP's `stgp_demo.py` builds its spatio-temporal GP with the kernel's
length scale taken once in `__init__`, `self.length_scale =
torch.exp(self.log_length_scale)`: the tensor is computed from the parameter
a single time and every likelihood evaluation reuses it.  The first
`loss.backward()` frees that `exp` node's saved result, and the second
iteration's backward raises "Trying to backward through the graph a second
time"; with `retain_graph=True` it would run but the length scale would never
change.  The fix takes the exponential where the kernel is evaluated.
Buggy line: `self.length_scale = torch.exp(self.log_length_scale)` in `STGP.__init__`.
Source: https://github.com/IceLab-X/MiniGP/issues/13"""
import math

import torch
import torch.nn as nn


class STGP(nn.Module):
    def __init__(self, X, Y, noise=0.1):
        super().__init__()
        self.X, self.Y = X, Y
        self.log_length_scale = nn.Parameter(torch.zeros(X.size(1)))
        self.log_scale = nn.Parameter(torch.tensor(0.0))
        self.log_noise = nn.Parameter(torch.tensor(math.log(noise)))
        self.length_scale = torch.exp(self.log_length_scale)  # expect: ADL017

    def kernel(self, X1, X2):
        d = (X1.unsqueeze(1) - X2.unsqueeze(0)) / self.length_scale
        return torch.exp(self.log_scale) * torch.exp(-0.5 * d.pow(2).sum(-1))

    def negative_log_likelihood(self):
        n = self.X.size(0)
        K = self.kernel(self.X, self.X) + torch.exp(self.log_noise) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(self.Y, L)
        return 0.5 * (self.Y * alpha).sum() + torch.log(torch.diagonal(L)).sum() + 0.5 * n * math.log(2 * math.pi)

    def train_adam(self, niteration=10, lr=0.1):
        optimizer = torch.optim.Adam(self.parameters(), lr=lr)
        for i in range(niteration):
            optimizer.zero_grad()
            loss = self.negative_log_likelihood()
            loss.backward()
            optimizer.step()


def run():
    torch.manual_seed(0)
    X = torch.rand(10, 2)
    Y = torch.sin(X.sum(1, keepdim=True) * 3)
    STGP(X, Y).train_adam(niteration=3)
