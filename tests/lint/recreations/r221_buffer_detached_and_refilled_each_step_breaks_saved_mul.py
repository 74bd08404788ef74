"""A rollout keeps one preallocated state buffer `x` and refills it at each
step: `x.detach_()` cuts the previous step's history, `x.copy_(new_state)`
writes the new state, and the step's cost `(x * weight).sum()` is
accumulated into the loss.  `x * weight` keeps `x` for the gradient of
`weight`, and the next step's `x.copy_(...)` overwrites it; `loss.backward()`
after the rollout fails ("one of the variables needed for gradient
computation has been modified by an inplace operation"), where PyTorch 0.4
silently used the last value.  The fix stores each step's state in a new
tensor (`x = new_state`).
Buggy line: `x.copy_(new_state)` in `rollout`, after the previous step's
`x * weight`.
Expected finding: ADL001 there.
Source: https://github.com/pytorch/pytorch/issues/15115"""
import torch
import torch.nn as nn


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Parameter(torch.ones(1))
        self.weight = nn.Parameter(torch.full((1,), 2.0))

    def step_state(self):
        return torch.exp(self.mu)


def rollout(model, horizon=3):
    x = torch.randn(1)
    loss = 0
    for _ in range(horizon):
        x.detach_()
        new_state = model.step_state()
        x.copy_(new_state)  # missed: ADL001
        loss += (x * model.weight).sum()
    return loss


def train(model, epochs=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = rollout(model)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    train(Dynamics())
