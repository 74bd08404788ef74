"""Quantisation-aware training written by hand: the hidden activations are rounded to a grid of
1/8 with `torch.round`, whose backward sends zeros, so the first layer never gets a gradient (no
error: the second layer still trains). The usual straight-through estimator keeps the rounded
value in the forward pass and passes the gradient through as if rounding were the identity:
`x.round().detach() + (x - x.detach())` (the forward values are the same bits)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QuantisedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(4, 6)
        self.second = nn.Linear(6, 2)

    def forward(self, x):
        hidden = torch.sigmoid(self.first(x)) * 8
        hidden = torch.round(hidden) / 8  # PRIMARY
        return self.second(hidden)


model = QuantisedMLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
for step in range(4):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
