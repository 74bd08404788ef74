# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 19
# trigger: a sensitivity sweep builds its dual inputs with a generator function; the generator is
#   created inside `with fwAD.dual_level():`, but it runs (make_dual) only when the loop after the
#   block iterates it
# source: none found; the pattern as users write it
# results: tangents
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch.autograd.forward_ad as fwAD


def dual_batches(batches, direction):
    for x in batches:
        yield fwAD.make_dual(x, direction.expand_as(x))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
batches = [torch.randn(2, 3) for _ in range(3)]
direction = torch.tensor([1.0, 0.0, 0.0])
with torch.no_grad():
    with fwAD.dual_level():
        stream = dual_batches(batches, direction)
    tangents = []
    for dual in stream:  # PRIMARY
        tangents.append(fwAD.unpack_dual(model(dual)).tangent)
