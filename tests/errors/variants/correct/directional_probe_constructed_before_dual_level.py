# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 20
# trigger: a directional-derivative probe object makes its dual input in __init__ (self.dual =
#   fwAD.make_dual(x, v)); the script constructs the probe on the line before `with fwAD.dual_level():`
#   and only evaluates it inside the block
# source: none found; the pattern as users write it (set-up done in a constructor)
# results: slopes
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class DirectionalProbe:
    def __init__(self, x, direction):
        self.dual = fwAD.make_dual(x, direction)

    def slope(self, model):
        return fwAD.unpack_dual(model(self.dual)).tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
x = torch.randn(4, 3)
slopes = []
for axis in range(3):
    direction = torch.zeros(4, 3)
    direction[:, axis] = 1.0
    with fwAD.dual_level():
        probe = DirectionalProbe(x, direction)  # PRIMARY
        slopes.append(probe.slope(model))
