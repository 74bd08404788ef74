import torch
import torch.nn as nn
import torch.nn.functional as F


def a(model, opt, x, y):
    loss = ((model(x) - y) ** 2).sum(dim=1)
    opt.zero_grad()
    loss.mean().backward()
    opt.step()


def b(model, opt, x, y):
    loss = ((model(x) - y) ** 2).sum(dim=1).mean()
    loss.backward()


def c(model, opt, x, y):
    loss = F.mse_loss(model(x), y, reduction="none")
    loss.backward(torch.ones_like(loss))


def d(model, opt, x, y):
    per = ((model(x) - y) ** 2).sum(1)
    loss = per.sum()
    loss.backward()


def e(model, x):
    flat = model(x).sum(-1)
    flat.backward()


def run():
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    for f in (a, b, c, d):
        f(model, opt, x, y)
    e(model, torch.randn(3))
    return True
