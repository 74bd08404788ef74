"""A submodule returns its sigmoid output re-bound to a permuted view of
itself (`g = g.permute(0, 2, 1)`); the caller scales what it gets back in
place, which is still the memory sigmoid keeps: backward() raises."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        g = torch.sigmoid(self.conv(x))
        g = g.permute(0, 2, 1)
        return g


class Model(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.gate = Gate(channels)
        self.out = nn.Linear(channels, 1)

    def forward(self, x):
        w = self.gate(x)
        w *= 2.0  # ADL001
        return self.out(w)


def run():
    torch.manual_seed(0)
    model = Model()
    model(torch.randn(2, 3, 5)).sum().backward()
    return [p.grad.clone() for p in model.parameters()]
