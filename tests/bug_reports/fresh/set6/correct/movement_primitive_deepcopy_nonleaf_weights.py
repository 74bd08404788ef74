"""Learning probabilistic movement primitives from images: a network predicts the basis weights of
the primitive, and a logging helper that plots the scaled basis functions during training
deep-copies those weights, a non-leaf tensor with a graph.
Source: https://github.com/ALRhub/MP_PyTorch/issues/99 ("Draw scaled basis func shall raise error
when during training procedure, caused by tensor deep copy": "Only Tensors created explicitly by
the user (graph leaves) support the deepcopy protocol at the moment"; the copy must be of the
detached weights).
expect: raises"""
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)
N_BASIS, T = 6, 20


class ProMP:
    def __init__(self):
        centers = torch.linspace(0, 1, N_BASIS)
        times = torch.linspace(0, 1, T)
        basis = torch.exp(-((times[:, None] - centers[None, :]) ** 2) / 0.02)
        self.basis = basis / basis.sum(1, keepdim=True)
        self.weights = None

    def update_inputs(self, weights):
        self.weights = weights

    def trajectory(self):
        return self.weights @ self.basis.t()

    def scaled_basis(self):
        weights = copy.deepcopy(self.weights.detach())
        return self.basis[None] * weights[:, None, :]


policy = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, N_BASIS))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
mp = ProMP()
context, demos = torch.randn(5, 8), torch.randn(5, T)
losses, plotted = [], []
for step in range(4):
    mp.update_inputs(policy(context))
    loss = ((mp.trajectory() - demos) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if step % 2 == 0:
        plotted.append(mp.scaled_basis().sum(1))
result = {"losses": losses, "plotted": plotted, "params": [p.detach().clone() for p in policy.parameters()]}
