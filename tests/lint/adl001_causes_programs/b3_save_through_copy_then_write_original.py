"""The product is taken through a second name of a layer's output (`y = h`,
`sq = y * y` keeps `y`), then the original name is written in place."""
import torch
import torch.nn as nn


class Energy(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.lin(x)
        y = h
        sq = y * y
        h.add_(1.0)  # ADL001
        return sq.sum()


def train(model, x):
    model(x).backward()


def run():
    torch.manual_seed(0)
    model = Energy()
    train(model, torch.randn(2, 4))
    return [p.grad.clone() for p in model.parameters()]
