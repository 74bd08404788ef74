"""A recurrence f(n) = sigmoid(f(n-1) * x) stored row by row in a tensor
allocated up front: `f[i] = f[i-1] * x`, then `f[i] = 1 / (1 + exp(-f[i]))`.
The product keeps `f[i-1]`, a view of `f`, for the gradient with respect to
`x`, and every later write into `f` bumps the version of that storage, so
`torch.autograd.grad(loss, [x])` fails ("modified by an inplace operation").
Collecting the steps in a list and stacking them avoids it.
Source: https://github.com/pytorch/pytorch/issues/36470"""
import torch
import torch.nn as nn


class LogisticChain(nn.Module):
    """Saturating growth of a signal over `steps` stages with a learnt gain."""

    def __init__(self, steps=10, start=1.0):
        super().__init__()
        self.steps = steps
        self.start = start
        self.gain = nn.Parameter(torch.ones(1))

    def forward(self):
        x = self.gain
        f = torch.zeros(self.steps)
        f[0] = self.start
        for i in range(1, self.steps):
            f[i] = f[i - 1] * x  # expect: ADL001
            f[i] = 1 / (1.0 + torch.exp(-f[i]))  # expect: ADL001
        return f


def sensitivity(chain):
    loss = torch.sum(chain())
    return torch.autograd.grad(loss, [chain.gain])[0]


def run():
    sensitivity(LogisticChain())
