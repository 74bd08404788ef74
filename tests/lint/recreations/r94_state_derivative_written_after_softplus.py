"""A right-hand side filled column by column: `b[:, 0] = a[:, 0]`, then
`b[:, 1] = Softplus()(b[:, 0])`.  Softplus keeps its input, a view of `b`, for
backward, and the second assignment writes `b` in place, so differentiating
the function (here with `torch.autograd.functional.jacobian`, as in the
report) fails ("output 0 of AsStridedBackward0, is at version 2; expected
version 1").  `b[:, 0].clone()` as Softplus' input avoids it.
Source: https://github.com/pytorch/pytorch/issues/114505"""
import torch
import torch.nn as nn


class CoupledRate(nn.Module):
    """d/dt of a two-compartment state: the second rate is a soft-plus of the
    first, so it stays positive."""

    def __init__(self, beta=1.0):
        super().__init__()
        self.act = nn.Softplus(beta=beta)

    def forward(self, a):
        b = torch.zeros_like(a)
        b[:, 0] = a[:, 0]
        b[:, 1] = self.act(b[:, 0])  # missed: ADL001
        return b


def euler_step(rate, state, dt=0.1):
    return state + dt * rate(state)


def sensitivity(rate, state):
    return torch.autograd.functional.jacobian(lambda s: euler_step(rate, s), state)


def run():
    torch.manual_seed(0)
    rate = CoupledRate()
    sensitivity(rate, torch.randn(3, 2))
