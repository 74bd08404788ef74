"""`copy.deepcopy(model)` after a forward that stored a graph tensor on `self`.
Source: https://github.com/pytorch/pytorch/issues/54580"""
import copy

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.con1 = nn.Conv2d(1, 2, 3)

    def forward(self, x):
        self.exp = self.con1(x)
        return self.exp


def run():
    model = Net()
    model(torch.randn(1, 1, 6, 6))
    copy.deepcopy(model)  # expect: ADL017
