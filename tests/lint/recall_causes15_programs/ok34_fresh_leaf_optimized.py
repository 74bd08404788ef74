import torch
import torch.nn as nn


def invert(model, target, init):
    z = torch.tensor(init.detach().numpy(), requires_grad=True)
    opt = torch.optim.Adam([z], lr=0.05)
    for _ in range(5):
        loss = ((model(z) - target) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return z


def saliency(model, img):
    x = torch.tensor(img.detach().cpu().numpy(), requires_grad=True)
    out = model(x)
    out.sum().backward()
    return x.grad


def train(model, opt, x, y):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    logged = torch.tensor(loss.item())
    total = torch.tensor(loss.item(), requires_grad=True)
    return logged, total


def run():
    model = nn.Linear(3, 1)
    invert(model, torch.zeros(1), torch.randn(3))
    saliency(model, torch.randn(2, 3))
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(4, 3), torch.randn(4, 1))
    return True
