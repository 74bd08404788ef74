"""The input of a convolution is overwritten by `x += residual`.
Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(4)
        self.conv_1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(4)

    def forward(self, x):
        x = self.bn_0(self.conv_0(x))
        x = F.relu(x)
        residual = self.bn_1(self.conv_1(x))
        x += residual  # expect: ADL001
        return x


def run():
    ResidualUnit()(torch.randn(2, 3, 5, 5)).sum().backward()
