import torch
import torch.nn as nn


def train(model, opt, x, y):
    pred = model(x)
    loss = ((pred - y) ** 2).sum(dim=1)  # BUG35
    opt.zero_grad()
    loss.backward()
    opt.step()


def run():
    model = nn.Linear(3, 2)
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(4, 3), torch.randn(4, 2))
