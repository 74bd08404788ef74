"""A forum thread "Understanding Autograd + ReLU(inplace = True)": the
poster tests ResNet-like code, `residual_activation_inplace(x, residual,
activation, inplace)` (adds the residuals into `x` with `+=`, then applies
`activation(x, inplace=inplace)`), and asks for the gradient at `x`; with
the in-place ReLU the gradient of a negative entry is 1 instead of 0.  The
answer: after `F.relu_(x)` the name `x` is the ReLU's output, so the
gradient asked for is d(x)/d(x).  Re-created as a residual block using the
helper, and a probe that takes the gradient of the block's output with
respect to its pre-activation sum.  Nothing raises; the probe returns all
ones instead of the ReLU mask.
Buggy line: `return activation(x, inplace=inplace)` with `inplace=True`
(the pre-activation tensor `x` is overwritten and later differentiated).
Source: https://discuss.pytorch.org/t/understanding-autograd-relu-inplace-true/89031"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def residual_activation_inplace(x, residual, activation, inplace):
    for r in residual:
        x += r
    return activation(x, inplace=inplace)  # missed: ADL002


class ResidualBlock(nn.Module):
    def __init__(self, c=4, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.inplace = inplace

    def forward(self, x):
        pre = self.conv(x)
        out = residual_activation_inplace(pre, [x], F.relu, self.inplace)
        return out, pre


def preactivation_grad(block, x):
    out, pre = block(x)
    return torch.autograd.grad(out.sum(), pre)[0]


def bug_shows():
    """With inplace=True the gradient at the pre-activation is 1 everywhere."""
    torch.manual_seed(0)
    x = torch.randn(1, 4, 5, 5)
    block = ResidualBlock(inplace=True)
    got = preactivation_grad(block, x)
    block.inplace = False
    out, pre = block(x)
    want = (pre > 0).float()
    return bool((got == 1).all()) and not torch.equal(got, want)
