"""Near twin of b4: the submodule returns a copy of the permuted sigmoid
output (`.clone()`); the caller's in-place scaling is harmless.  Silent."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        g = torch.sigmoid(self.conv(x))
        g = g.permute(0, 2, 1).clone()
        return g


class Model(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.gate = Gate(channels)
        self.out = nn.Linear(channels, 1)

    def forward(self, x):
        w = self.gate(x)
        w *= 2.0
        return self.out(w)


def run():
    torch.manual_seed(0)
    model = Model()
    model(torch.randn(2, 3, 5)).sum().backward()
    return [p.grad.clone() for p in model.parameters()]
