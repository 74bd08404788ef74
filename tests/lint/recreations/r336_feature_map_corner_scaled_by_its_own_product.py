"""A model scales the corner pixels of one feature map by a second branch's
output: `x[0, :, 0, 0] = x[0, :, 0, 0] * var`.  The product keeps its
operand `x[0, :, 0, 0]`, a view of `x`, for backward; the assignment then
writes the same region of `x`, so `loss.backward()` fails ("one of the
variables needed for gradient computation has been modified by an inplace
operation"), while the in-place `x[0, :, 0, 0] *= var` works (autograd knows
the write is coming).  The maintainers: "The multiplication saves
`x[0, :, 0, 0]` for backwards, but then you mutate it"; the fix multiplies a
clone.
Buggy line: the assignment in `Model.forward`.
Expected finding: ADL010 (an in-place write reading a view of its target) or
ADL001 there.
Source: https://github.com/pytorch/pytorch/issues/55980"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0] * var  # expect: ADL001
        return torch.mean(x)


def run():
    torch.manual_seed(0)
    model = Model()
    x = torch.ones([1, 12, 3, 3])
    y = torch.ones([1, 12, 3, 3])
    loss = model(x, y)
    loss.backward()
