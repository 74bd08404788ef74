# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 24
# helpers: lib_symmetric24.py
# trigger: fine-tuning freezes the first layer, a symmetric-weight layer made by a library helper with
#   torch.nn.utils.parametrize.register_parametrization, by layer.weight.requires_grad_(False): the weight
#   attribute is computed from parametrizations.weight.original on each access
# source: none found; the pattern as users write it (freezing by attribute name)
# results: model[0].parametrizations.weight.original, model[0].bias, model[2].weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_symmetric24 import symmetric_linear  # noqa: E402


def freeze_first_layer(model):
    model[0].weight.requires_grad_(False)  # PRIMARY
    model[0].bias.requires_grad_(False)


torch.manual_seed(0)
model = nn.Sequential(symmetric_linear(4), nn.ReLU(), nn.Linear(4, 1))
freeze_first_layer(model)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
inputs = torch.randn(12, 4)
targets = torch.randn(12, 1)
losses = []
for step in range(3):
    loss = nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
