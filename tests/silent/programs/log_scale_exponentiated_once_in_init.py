"""A feature-wise learned temperature: the module stores `self.scale = self.log_scale.exp()` in
__init__ and multiplies by it in forward. The first backward() frees the graph of that one exp,
so the second failed with "Trying to backward through the graph a second time" until
retain_graph=True was added. Now nothing is raised, and the optimizer moves log_scale while the
scale the model uses never changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tempered(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.log_scale = nn.Parameter(torch.zeros(features))
        self.scale = self.log_scale.exp()  # PRIMARY

    def forward(self, x):
        return self.linear(x) * self.scale


torch.manual_seed(0)
model = Tempered(4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(16, 4), torch.randn(16, 4)
for _ in range(4):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
result = [model(x).detach()] + [p.detach().clone() for p in model.parameters()]
