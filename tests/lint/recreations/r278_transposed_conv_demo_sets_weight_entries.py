"""A book's DCGAN chapter shows what a transposed convolution computes: it
builds a one-channel `nn.Conv2d` and `nn.ConvTranspose2d` and sets their 2x2
kernels by hand, `m.weight[0, 0, 0, 0] = 1`, `m.weight[0, 0, 0, 1] = 2`, ...
The weight is a parameter, a leaf that requires grad, and writing into a
view of it raises ("a view of a leaf Variable that requires grad is being
used in an in-place operation").  The fix writes under `torch.no_grad()`
(or through `m.weight.data`).
Buggy line: `m.weight[0, 0, 0, 0] = 1` in `show_convolution`.
Expected finding: ADL014 there.
Source: https://github.com/YutaroOgawa/pytorch_advanced/issues/160"""
import torch
import torch.nn as nn


def show_convolution():
    m = nn.Conv2d(1, 1, 2, stride=1, bias=False)
    m.weight[0, 0, 0, 0] = 1  # expect: ADL014
    m.weight[0, 0, 0, 1] = 2  # expect: ADL014
    m.weight[0, 0, 1, 0] = 3  # expect: ADL014
    m.weight[0, 0, 1, 1] = 4  # expect: ADL014
    x = torch.arange(1., 10.).view(1, 1, 3, 3)
    return m(x)


def show_transposed_convolution():
    m = nn.ConvTranspose2d(1, 1, 2, stride=1, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[[[1., 2.], [3., 4.]]]]))
    x = torch.arange(1., 5.).view(1, 1, 2, 2)
    return m(x)


def run():
    print(show_convolution())
    print(show_transposed_convolution())
