"""Correct near twins of cause 1: a `Linear` output (nothing keeps it) floored in
place by a module under a configured `if`; a sigmoid output handed to a helper
whose write runs only under a flag parameter that no caller sets."""
import torch
import torch.nn as nn


class Floor(nn.Module):
    def __init__(self, eps=None):
        super().__init__()
        self.eps = eps

    def forward(self, z):
        if self.eps is not None:
            z[z < self.eps] = self.eps  # fine: nothing kept z (a Linear keeps its input)
        return z


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.floor = Floor(eps=0.0)

    def forward(self, x):
        z = self.fc(x)
        z = self.floor(z)
        return z.sum()


def run_floor():
    head = Head()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    loss = head(torch.randn(5, 4))
    opt.zero_grad()
    loss.backward()
    opt.step()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def squash(self, p, clip=False):
        if clip:
            p[p > 0.99] = 0.99  # only when a caller asks: none does
        return p

    def forward(self, x):
        p = torch.sigmoid(self.fc(x))
        p = self.squash(p)
        return p.sum()


def run_flag():
    net = Net()
    loss = net(torch.randn(5, 4))
    loss.backward()
