"""Training a network to predict a function and its derivative (Sobolev training): the derivative
of the output with respect to the input is taken with `torch.autograd.grad(..., retain_graph=True)`
but without `create_graph=True`, so the derivative loss is a constant and trains nothing (no
error; `loss_z.grad_fn` is None).
Source: https://github.com/pytorch/pytorch/issues/31984 (answer: pass `create_graph=True` so that
the gradient itself is differentiable).
expect: silent"""
import torch
import torch.nn as nn
from torch.autograd import grad

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 30), nn.Tanh(), nn.Linear(30, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
x = torch.randn(64, 3)
y = (5 * torch.sin(x) + 3 * torch.cos(x)).sum(dim=-1, keepdim=True)
z = (5 * torch.cos(x) - 3 * torch.sin(x)).sum(dim=-1, keepdim=True)

history = []
for epoch in range(5):
    x.requires_grad = True
    optimizer.zero_grad()
    output = model(x)
    grad_x = grad(output.sum(), x, create_graph=True)[0]
    loss_y = nn.MSELoss()(output, y)
    loss_z = nn.MSELoss()(grad_x.sum(dim=-1, keepdim=True), z)
    loss = loss_y + loss_z
    loss.backward()
    optimizer.step()
    history.append(torch.stack([loss_y.detach(), loss_z.detach()]))
result = {"history": history, "params": [p.detach() for p in model.parameters()]}
