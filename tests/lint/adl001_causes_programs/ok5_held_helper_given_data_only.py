"""Near twin of b5: the held helper is only ever given data (a buffer made
without gradients), so nothing it computes carries a graph.  Silent; runs."""
import torch
import torch.nn as nn


class Scaler:
    def __init__(self, eps=1e-3):
        self.eps = eps

    def rescale(self, values, log_scale):
        scale = torch.exp(log_scale)
        scale += self.eps
        return values * scale


class Head(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.scaler = Scaler()
        self.register_buffer("log_scale", torch.zeros(dim))

    def forward(self, x):
        return self.proj(self.scaler.rescale(x, self.log_scale))


def run():
    torch.manual_seed(0)
    head = Head()
    head(torch.randn(2, 4)).sum().backward()
    return [p.grad.clone() for p in head.parameters()]
