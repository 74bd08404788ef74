"""Dive into Deep Learning, "Custom Layers": the PyTorch version of the
hand-written linear layer computes its output from `.data` of its own
parameters, `torch.matmul(X, self.weight.data) + self.bias.data`.  `.data`
is a tensor outside autograd, so the layer's weight and bias never receive
a gradient and a network built from it never trains them; nothing raises.
The pull request uses `self.weight` and `self.bias`.
Source: https://github.com/d2l-ai/d2l-en/pull/2600"""
import torch
import torch.nn.functional as F
from torch import nn


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data  # missed: ADL004
        return F.relu(linear)


def build_net():
    return nn.Sequential(MyLinear(8, 6), MyLinear(6, 1))


def train_step(net, X, y, lr=0.1):
    trainer = torch.optim.SGD(net.parameters(), lr=lr)
    loss = nn.MSELoss()
    l = loss(net(X), y)
    trainer.zero_grad()
    l.backward()
    trainer.step()


def bug_shows():
    torch.manual_seed(0)
    net = build_net()
    X = torch.randn(4, 8, requires_grad=True)
    before = net[0].weight.detach().clone()
    train_step(net, X, torch.randn(4, 1))
    # the input gets a gradient, the layer's own weight does not, and it never changes
    return X.grad is not None and net[0].weight.grad is None and torch.equal(before, net[0].weight.detach())
