"""Near twin of b2: the second name is a clone, so the write leaves the tanh
output alone.  Silent."""
import torch
import torch.nn as nn


class Squash(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        act = torch.tanh(self.proj(x))
        scaled = act.clone()
        scaled.mul_(0.5)
        return scaled


def run():
    torch.manual_seed(0)
    model = Squash()
    model(torch.randn(2, 4)).sum().backward()
    return [p.grad.clone() for p in model.parameters()]
