"""A physics-informed network for steady heat conduction in a rod, -k u''(x) = q(x) on [0, 1] with
fixed end temperatures as soft boundary terms. The network uses ReLU activations: it is piecewise
linear in x, so the second derivative that autograd returns is zero everywhere (a graph that
exists, with zero values). The PDE residual degenerates to -q(x), its gradient with respect to the
weights is zero, and only the boundary term trains: the rod's temperature never follows the heat
source, and nothing is raised.
Source: https://github.com/lululxvi/deepxde/issues/80 ("Convergence issue on Navier-Stokes
equation": the maintainer's first advice, "Don't use relu, which is not second order
differentiable. Use smooth activations, e.g., tanh", made the residuals converge).
expect: silent"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

CONDUCTIVITY, LEFT, RIGHT, POINTS = 1.0, 0.0, 1.0, 48


def second_derivative(u, x):
    first = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    return torch.autograd.grad(first.sum(), x, create_graph=True)[0]


network = nn.Sequential(nn.Linear(1, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU(), nn.Linear(24, 1))
optimizer = torch.optim.Adam(network.parameters(), lr=5e-3)
boundary_x = torch.tensor([[0.0], [1.0]])
boundary_u = torch.tensor([[LEFT], [RIGHT]])
losses = []
for step in range(30):
    x = torch.rand(POINTS, 1, requires_grad=True)
    heat_source = 10.0 * torch.sin(math.pi * x)
    residual = -CONDUCTIVITY * second_derivative(network(x), x) - heat_source
    loss = (residual**2).mean() + ((network(boundary_x) - boundary_u) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in network.parameters()]}
