"""A physics-informed network for the 2-D Helmholtz equation u_xx + u_yy + k**2 u = q(x, y): the
PDE loss takes the gradient of u with respect to the collocation points g = (x, y), then the
"second derivatives" with one more `autograd.grad(u_x, g, grad_outputs=torch.ones_like(u_x))`
over both columns of u_x at once. That call differentiates u_x[:, 0] + u_x[:, 1], so its columns
are u_xx + u_xy and u_yx + u_yy: the Laplacian built from them carries twice the mixed partial.
The residual is wrong, the network fits a different PDE, and nothing is raised.
Source: https://github.com/prateekbhustali/Physics-Informed-Neural-Networks/issues/4 ("the PyTorch
version ... result was bad"; answer: compute u_xx and u_yy from u_x[:, [0]] and u_x[:, [1]]
separately, "the original code will mix the partial derivative into the Laplace term").
expect: silent"""
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
        u_xx = torch.autograd.grad(u_x, g, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
        laplacian = u_xx[:, [0]] + u_xx[:, [1]]
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
