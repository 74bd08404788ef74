"""Physics-informed network for the heat equation u_t = u_xx with a Neumann condition on a moving
boundary x = 2*pi*exp(-t). The boundary times `t_b` come from the same sampler as every other
point, with `requires_grad=True`; the boundary positions are computed from them,
`x_b = 2 * pi * torch.exp(-t_b)`, and `x_b.requires_grad = True` is set to take du/dx there.
`x_b` is not a leaf, so it raises "you can only change requires_grad flags of leaf variables".
Source: https://github.com/erfanhamdi/pinn-torch/issues/1 ("Question about the MSE on the
boundary": `x_b_lower = 2*numpy.pi*torch.exp(-t_b)` then `x_b_lower.requires_grad = True`
"make an error"; the change PyTorch's message names: take the positions as new leaves with
`.detach()`, so du/dx is taken at those points).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def sample_points(n):
    return torch.rand(n, requires_grad=True)


def derivative(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]


model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def mse_f(x_f, t_f):
    u = model(torch.stack((x_f, t_f), dim=1)).squeeze(1)
    u_t = derivative(u, t_f)
    u_xx = derivative(derivative(u, x_f), x_f)
    return ((u_t - u_xx) ** 2).mean()


def mse_b(t_b):
    x_b = 2 * math.pi * torch.exp(-t_b)
    x_b.requires_grad = True
    u_b = model(torch.stack((x_b, t_b), dim=1)).squeeze(1)
    u_b_x = derivative(u_b, x_b)
    return (u_b_x ** 2).mean()


losses = []
for step in range(3):
    x_f = 2 * math.pi * sample_points(32).detach().requires_grad_(True)
    t_f, t_b = sample_points(32), sample_points(16)
    loss = mse_f(x_f, t_f) + mse_b(t_b)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
