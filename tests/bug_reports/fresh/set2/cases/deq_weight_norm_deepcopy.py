"""DEQ with its own weight normalization: the normalized weight is kept on the module as a plain
attribute computed from g and v, so `copy.deepcopy(model)` fails (not a graph leaf).
Source: https://github.com/locuslab/deq/issues/23 (answer: save and load the state instead of
deepcopy).
expect: raises"""
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class WNLinear(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.v = nn.Parameter(torch.randn(n, n))
        self.g = nn.Parameter(torch.ones(n, 1))
        self.reset()

    def reset(self):
        self.weight = self.g * self.v / self.v.norm(dim=1, keepdim=True)

    def forward(self, z):
        return z @ self.weight.T


model = WNLinear(3)
snapshot = copy.deepcopy(model)
x = torch.randn(2, 3)
loss = torch.tanh(model(x) + x).pow(2).sum()
loss.backward()
result = {"loss": loss.detach(), "v": model.v.grad, "g": model.g.grad}
