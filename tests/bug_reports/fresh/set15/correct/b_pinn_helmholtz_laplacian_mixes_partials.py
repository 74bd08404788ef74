"""A physics-informed network for the 2-D Helmholtz equation with each second derivative taken
from its own column of the gradient, as the answer in the report does.
Source: https://github.com/prateekbhustali/Physics-Informed-Neural-Networks/issues/4."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

K = 1.0


def source_term(g):
    x, y = g[:, [0]], g[:, [1]]
    u_exact = torch.sin(math.pi * x) * torch.sin(4 * math.pi * y)
    return (-(math.pi ** 2) - (4 * math.pi) ** 2 + K ** 2) * u_exact


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))

    def loss_pde(self, g):
        g = g.clone().requires_grad_(True)
        u = self.net(g)
        u_x = torch.autograd.grad(u, g, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_x1, u_x2 = u_x[:, [0]], u_x[:, [1]]
        u_xx1 = torch.autograd.grad(u_x1, g, grad_outputs=torch.ones_like(u_x1), create_graph=True)[0][:, [0]]
        u_xx2 = torch.autograd.grad(u_x2, g, grad_outputs=torch.ones_like(u_x2), create_graph=True)[0][:, [1]]
        laplacian = u_xx1 + u_xx2
        residual = laplacian + K ** 2 * u - source_term(g)
        return (residual ** 2).mean()

    def loss_boundary(self, g_boundary):
        return (self.net(g_boundary) ** 2).mean()


collocation = 2 * torch.rand(64, 2) - 1
edge = 2 * torch.rand(16, 1) - 1
ones = torch.ones(16, 1)
boundary = torch.cat([torch.cat([edge, ones], 1), torch.cat([edge, -ones], 1),
                      torch.cat([ones, edge], 1), torch.cat([-ones, edge], 1)])
model = PINN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = model.loss_pde(collocation) + model.loss_boundary(boundary)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
