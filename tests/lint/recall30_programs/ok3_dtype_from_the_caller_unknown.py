"""Silent by design: the dtype is the caller's argument, so whether `.to(...)`
copies is not known from the function (float32 keeps the leaf)."""
import torch


def descend(dtype, steps=2, lr=0.1):
    w = torch.randn(3, requires_grad=True).to(device="cpu", dtype=dtype)
    for _ in range(steps):
        loss = (w ** 2).sum()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
    return w


def run():
    return descend(torch.float32)
