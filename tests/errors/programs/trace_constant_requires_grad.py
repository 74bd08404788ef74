import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.scale = torch.ones(3, requires_grad=True)  # PRIMARY

    def forward(self, x):
        return self.linear(x) * self.scale


torch.manual_seed(0)
model = Scaler()
x = torch.randn(2, 3)
traced = torch.jit.trace(model, x)
traced(x).sum().backward()
