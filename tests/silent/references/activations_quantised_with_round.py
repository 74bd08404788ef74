"""Straight-through rounding: the first layer gets the gradient as if rounding were the identity."""
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
        hidden = (torch.round(hidden).detach() + (hidden - hidden.detach())) / 8
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
