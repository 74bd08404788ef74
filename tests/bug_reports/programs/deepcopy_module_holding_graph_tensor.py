"""`copy.deepcopy(model)` after a forward that stored a graph tensor on the module.
Source: https://github.com/pytorch/pytorch/issues/54580 ("Only Tensors created explicitly by
the user support the deepcopy protocol"; answer: do not keep the non-leaf output on self)."""
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.con1 = nn.Conv2d(1, 2, 3)

    def forward(self, x):
        self.exp = self.con1(x)  # PRIMARY
        return self.exp


model = Net()
model(torch.randn(1, 1, 6, 6))
model_copy = copy.deepcopy(model)  # ERROR
