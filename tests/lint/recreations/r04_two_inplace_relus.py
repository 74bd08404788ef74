"""Two in-place ReLU modules in a row: the second overwrites the output the first saved.
Source: https://github.com/pytorch/pytorch/issues/34429"""
import torch
import torch.nn as nn

conv1 = nn.Conv2d(3, 8, kernel_size=1, bias=False)
bn = nn.BatchNorm2d(8)
relu1 = nn.ReLU(inplace=True)
relu2 = nn.ReLU(inplace=True)


def run():
    x = conv1(torch.randn(4, 3, 5, 5))
    x = bn(x)
    x = relu1(x)
    x = relu2(x)  # expect: ADL001
    x.sum().backward()
