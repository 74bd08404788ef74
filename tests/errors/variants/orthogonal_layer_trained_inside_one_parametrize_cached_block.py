# message: Trying to backward through the graph a second time (or directly access saved tensors after
#   they have already been freed).
# code: AD302 (catalogue: backward_twice)
# set: 23
# trigger: a model with an orthogonal parametrization (torch.nn.utils.parametrizations.orthogonal) wraps
#   its whole training loop in torch.nn.utils.parametrize.cached() to compute the orthogonal weight
#   once "for speed"; the cached weight and its graph are reused by the second step, whose backward()
#   goes through the graph the first step freed
# source: none found; the pattern as users write it
# results: model[0].parametrizations.weight.original, model[2].weight, losses
import os
import sys

import torch
from torch import nn
from torch.nn.utils import parametrize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
model = nn.Sequential(nn.utils.parametrizations.orthogonal(nn.Linear(4, 4)), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
with parametrize.cached():  # PRIMARY
    for step in range(3):
        x = torch.randn(6, 4)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
