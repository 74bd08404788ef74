"""A forward keeps a tanh output under a second name and scales it in place
through that name; tanh's backward needs its output: backward() raises."""
import torch
import torch.nn as nn


class Squash(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        act = torch.tanh(self.proj(x))
        scaled = act
        scaled.mul_(0.5)  # ADL001
        return scaled


def run():
    torch.manual_seed(0)
    model = Squash()
    model(torch.randn(2, 4)).sum().backward()
    return [p.grad.clone() for p in model.parameters()]
