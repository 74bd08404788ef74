"""A physics-informed network for -u''(x) = f(x) whose residual differentiates the whole trial
solution twice, so the linear boundary lift contributes its (zero) curvature without a separate
second derivative of a constant.
Source: https://github.com/pytorch/pytorch/issues/32304."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

A, B, POINTS = 1.0, 2.0, 32


def second_derivative(y, x):
    first = torch.autograd.grad(y.sum(), x, create_graph=True)[0]
    return torch.autograd.grad(first.sum(), x, create_graph=True)[0]


network = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)
losses = []
for step in range(20):
    x = torch.rand(POINTS, 1, requires_grad=True)
    forcing = (math.pi**2) * torch.sin(math.pi * x)
    lift = A + (B - A) * x
    bubble = x * (1 - x) * network(x)
    u_xx = second_derivative(lift + bubble, x)
    loss = ((-u_xx - forcing) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in network.parameters()]}
