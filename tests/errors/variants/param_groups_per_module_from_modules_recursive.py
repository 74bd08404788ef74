# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 19
# trigger: layer-wise learning rates: one parameter group per module with parameters, built from
#   model.modules(); the container and its children are all modules, and m.parameters() recurses, so
#   every child's parameters are also in the container's group
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def layerwise_groups(model, base_lr, decay):
    groups = []
    for depth, module in enumerate(model.modules()):
        params = list(module.parameters())  # PRIMARY
        if params:
            groups.append({"params": params, "lr": base_lr * decay ** depth})
    return groups


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(layerwise_groups(model, 0.1, 0.5), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(5, 3)).pow(2).mean()
    loss.backward()
    optimizer.step()
