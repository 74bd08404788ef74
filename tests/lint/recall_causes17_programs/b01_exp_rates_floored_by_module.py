"""Cause 1 (ADL001): a module whose forward floors its input in place under
`if self.eps is not None`, applied to `torch.exp` rates (ExpBackward0 keeps its
output).  Found before this branch too (a module writing its argument)."""
import torch
import torch.nn as nn


class Floor(nn.Module):
    def __init__(self, eps=None):
        super().__init__()
        self.eps = eps

    def forward(self, rates):
        if self.eps is not None:
            rates[rates < self.eps] = self.eps
        return rates


class PoissonHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.floor = Floor(eps=1e-3)

    def forward(self, x):
        rates = torch.exp(self.fc(x))
        rates = self.floor(rates)  # bug
        return rates


def run():
    head = PoissonHead()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    x, y = torch.randn(5, 4), torch.poisson(torch.ones(5, 3))
    loss = nn.functional.poisson_nll_loss(head(x), y, log_input=False)
    opt.zero_grad()
    loss.backward()
    opt.step()
