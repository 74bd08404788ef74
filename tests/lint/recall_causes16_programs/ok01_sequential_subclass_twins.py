"""Correct near twins: the same subclass ending in a convolution (which keeps
its input, not its output); a subclass with its own `forward` that returns a
clone; the skip added out of place after an in-place ReLU tail.  `run()`
returns the input gradients."""
import torch
import torch.nn as nn


class ConvConv(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, c, 1))


class ActClone(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.ReLU(inplace=True))

    def forward(self, x):
        return super().forward(x).clone()


class ActTail(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.a, self.b, self.c = ConvConv(c), ActClone(c), ActTail(c)

    def forward(self, x):
        y = self.a(x)
        y += x
        z = self.b(y)
        z += x
        w = self.c(z)
        w = w + x
        return w


def run():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 5, requires_grad=True)
    Net()(x).sum().backward()
    return x.grad
