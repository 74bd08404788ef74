# message: Output 0 of Split is a view and its base or another view of its base has been modified inplace.
# code: AD138 (catalogue: split_base_modified)
# set: 2
# trigger: a function splits a projection into gate and value with split(), then applies a local
#   nn.LeakyReLU(0.1, inplace=True) to the whole projection before using the pieces
# source: none found; the pattern as users write it
# results: loss, proj
import torch
from torch import nn


def gated(proj, x):
    act = nn.LeakyReLU(0.1, inplace=True)
    h = proj(x)
    gate, value = h.split(2, dim=1)
    h = act(h)  # PRIMARY
    return torch.sigmoid(gate) * value + h.mean(1, keepdim=True)


torch.manual_seed(0)
proj = nn.Linear(3, 4)
loss = gated(proj, torch.randn(5, 3)).pow(2).mean()
loss.backward()
