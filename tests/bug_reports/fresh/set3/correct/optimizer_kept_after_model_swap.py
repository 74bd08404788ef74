"""A model whose architecture is changed during training (a second network assigned to the same
name) keeps the optimizer built for the first network; the new network's parameters get gradients
but are never updated (no error).
Source: https://github.com/pytorch/pytorch/issues/54765 (answer: reinitialize the optimizer; it does
not know the new network's parameters).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=3e-2)
inputs, targets = torch.randn(10, 4), torch.randn(10, 1)
for _ in range(2):
    loss = (net(inputs) - targets).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=3e-2)
for _ in range(3):
    loss = (net(inputs) - targets).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in net.parameters()]}
