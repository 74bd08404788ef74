# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 18
# trigger: a layer's weight is kept orthogonal with torch.nn.utils.parametrizations.orthogonal; a
#   hand-written SGD loop updates [layer.weight, layer.bias] by name, but layer.weight is now
#   computed from the parametrization's original at each access, so its .grad is None
# source: none found; the pattern as users write it (a manual update written before the
#   parametrization was added)
# results: layer.parametrizations.weight.original, layer.bias
import os
import sys

import torch
from torch import nn
from torch.nn.utils.parametrizations import orthogonal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
layer = orthogonal(nn.Linear(3, 3))
x, y = torch.randn(5, 3), torch.randn(5, 3)
lr = 0.1
for _ in range(2):
    loss = (layer(x) - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in [layer.weight, layer.bias]:  # PRIMARY
            p -= lr * p.grad
            p.grad = None
