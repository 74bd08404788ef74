"""A plain helper object held by a module (`self.scaler = Scaler()`) exponentiates
a predicted log-scale and nudges the result in place; `exp` keeps its output
for backward, and the module passes the helper a layer's output: backward()
raises."""
import torch
import torch.nn as nn


class Scaler:
    def __init__(self, eps=1e-3):
        self.eps = eps

    def rescale(self, values, log_scale):
        scale = torch.exp(log_scale)
        scale += self.eps  # ADL001
        return values * scale


class Head(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.log_scale = nn.Linear(dim, dim)
        self.scaler = Scaler()

    def forward(self, x):
        return self.scaler.rescale(x, self.log_scale(x))


def run():
    torch.manual_seed(0)
    head = Head()
    head(torch.randn(2, 4)).sum().backward()
    return [p.grad.clone() for p in head.parameters()]
