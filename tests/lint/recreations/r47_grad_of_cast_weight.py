"""A hand-written gradient-descent fit makes its weight with
`requires_grad=True` and then casts it with `.type(torch.float)`; the cast is
a non-leaf, its `.grad` stays None after backward(), and the update fails.
Source: https://github.com/pytorch/pytorch/issues/10065"""
import torch


def fit(xs, ys, steps=3, lr=0.1):
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    w1 = w.type(torch.float)
    for _ in range(steps):
        pred = xs @ w1
        loss = torch.mean((pred - ys) ** 2)
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad  # expect: ADL020
    return w1


def run():
    torch.manual_seed(0)
    fit(torch.randn(5, 3), torch.randn(5))
