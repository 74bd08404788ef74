"""A physics-informed network for the 1-D Poisson problem -u''(x) = f(x) on [0, 1] with boundary
values u(0) = A, u(1) = B, imposed exactly by the trial solution u = g(x) + x(1 - x) N(x), where
g(x) = A + (B - A) x lifts the boundary values. The residual takes the second derivative of each
term with one helper (two calls of `torch.autograd.grad` with `create_graph=True`). The lift is
linear, so its first derivative is a constant without a `grad_fn`, and the second call raises
"element 0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/pytorch/pytorch/issues/32304 ("Second derivative fails if first
derivative happens to be constant": a second-derivative helper built from two autograd.grad
calls works for x**2 but raises that error for 2*x).
expect: raises"""
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
    u_xx = second_derivative(lift, x) + second_derivative(bubble, x)
    loss = ((-u_xx - forcing) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in network.parameters()]}
