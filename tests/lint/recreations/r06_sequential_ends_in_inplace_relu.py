"""An `nn.Sequential` ending in `ReLU(inplace=True)`, then `out += residual`.
Source: https://github.com/pytorch/pytorch/issues/5687"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out):
        super().__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 8, 3, 1, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        out = self.left(x)
        out += x  # expect: ADL001
        return F.relu(out)


def run():
    ResidualBlock(3, 3)(torch.randn(1, 3, 4, 4)).sum().backward()
