import torch
from torch.utils.checkpoint import checkpoint

calls = []


def block(x):  # PRIMARY
    calls.append(1)
    if len(calls) == 1:
        return x.sin() * x.sin()
    return x.sin()


x = torch.randn(3, requires_grad=True)
y = checkpoint(block, x, use_reentrant=False)
y.sum().backward()
