# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 24
# trigger: a hand-written SGD loop collects [layer.weight, layer.bias] of a layer under
#   torch.nn.utils.parametrizations.weight_norm: the weight attribute is computed from
#   parametrizations.weight.original0/original1 on each access (not a leaf), so its .grad is None and
#   lr * p.grad fails
# source: none found; the pattern as users write it (manual updates over named attributes)
# results: layer.parametrizations.weight.original0, layer.parametrizations.weight.original1, layer.bias, losses
import os
import sys

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
layer = weight_norm(nn.Linear(3, 2))
inputs = torch.randn(10, 3)
targets = torch.randn(10, 2)
params = [layer.weight, layer.bias]  # PRIMARY
lr = 0.1
losses = []
for step in range(3):
    loss = nn.functional.mse_loss(layer(inputs), targets)
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    losses.append(loss.detach())
