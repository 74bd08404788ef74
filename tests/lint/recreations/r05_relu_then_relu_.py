"""`F.relu_` on the result of `F.relu`, which ReluBackward0 keeps.
Source: https://github.com/pytorch/pytorch/issues/148835"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 10)

    def forward(self, x):
        x = self.linear(x)
        x = F.relu(x)
        x = F.relu_(x)  # expect: ADL001
        return x


def run():
    SimpleModel()(torch.randn(1, 10)).sum().backward()
