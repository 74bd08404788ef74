"""Swapping the residual sum and the in-place ReLU of a ResNet block.
Source: https://github.com/pytorch/vision/issues/807 (maintainer's comment)."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.bn(self.conv(x))
        out = self.relu(out)
        out += identity  # expect: ADL001
        return out


def run():
    Block(2)(torch.randn(2, 2, 4, 4, requires_grad=True)).sum().backward()
