"""Physics-informed DeepONet for a 1D Poisson problem -u'' = f, after DeepXDE's
`PDEOperatorCartesianProd._losses` with the PyTorch backend. The residual and boundary losses are
computed per input function, then gathered per loss term with `bkd.as_tensor(...)`
(`torch.as_tensor` of a tuple of loss tensors). That builds a new tensor from their values, cut
from the graph, so `loss.backward()` fails with "element 0 of tensors does not require grad and
does not have a grad_fn".
Source: https://github.com/lululxvi/deepxde/pull/1388 ("`bkd.as_tensor(array_like)` would create
a new tensor, and the loss would detach from the graph"; fixed in
https://github.com/lululxvi/deepxde/pull/1379 by stacking the losses).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_funcs, n_sensors, n_points, width = 4, 10, 16, 20


class DeepONetCartesianProd(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch = nn.Sequential(nn.Linear(n_sensors, width), nn.Tanh(), nn.Linear(width, width))
        self.trunk = nn.Sequential(nn.Linear(1, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh())

    def forward(self, func_vals, x):
        return torch.einsum("bi,ni->bn", self.branch(func_vals), self.trunk(x))


def per_function_losses(net, func_vals, source, x):
    u = net(func_vals, x)
    losses = []
    for i in range(n_funcs):
        du = torch.autograd.grad(u[i].sum(), x, create_graph=True)[0]
        d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
        residual = -d2u[:, 0] - source[i]
        boundary = u[i, [0, -1]]
        losses.append([torch.mean(residual**2), torch.mean(boundary**2)])
    losses = zip(*losses)
    losses = [torch.as_tensor(loss_term) for loss_term in losses]
    return [torch.mean(loss_term) for loss_term in losses]


net = DeepONetCartesianProd()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
sensors = torch.linspace(0, 1, n_sensors)
coeffs = torch.randn(n_funcs, 1)
func_vals = coeffs * torch.sin(torch.pi * sensors)
x = torch.linspace(0, 1, n_points).unsqueeze(1).requires_grad_()
source = coeffs * torch.sin(torch.pi * x.detach().squeeze(1))
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = sum(per_function_losses(net, func_vals, source, x))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in net.parameters()]}
