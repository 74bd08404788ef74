"""Correct near twin: the factory already makes float64 on the CPU, so
`.to(device="cpu", dtype=torch.float64)` hands back the leaf itself and `pts.grad`
is filled: no finding (the conversion is not certain to copy)."""
import torch


def fit_points(steps=3, lr=0.1):
    torch.manual_seed(0)
    pts = torch.rand(6, 2, dtype=torch.float64, requires_grad=True)
    pts = pts.to(device="cpu", dtype=torch.float64)
    target = torch.zeros(6, 2, dtype=torch.float64)
    for _ in range(steps):
        loss = ((pts - target) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            pts -= lr * pts.grad
            pts.grad.zero_()
    return pts


def run():
    return fit_points()
