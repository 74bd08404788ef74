# message: function LinearFunctionBackward returned an incorrect number of gradients (expected 3, got 2)
# code: AD120 (catalogue: function_wrong_count)
# set: 29
# trigger: a hand-written linear Function in another file takes an optional bias
#   (forward(ctx, x, weight, bias=None)) but its backward, written for the bias-free projections,
#   returns two gradients; a module's forward passes its own bias, which requires grad
# source: none found; the pattern as users write it (the docs' LinearFunction shortened, then given a bias)
# helpers: lib_linear29.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_linear29 import LinearFunction  # noqa: E402


class CustomLinear(nn.Module):
    def __init__(self, features, outputs, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(outputs, features) * 0.3)
        self.bias = nn.Parameter(torch.zeros(outputs)) if bias else None

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


torch.manual_seed(0)
model = nn.Sequential(CustomLinear(4, 6), nn.Tanh(), CustomLinear(6, 1, bias=False))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
