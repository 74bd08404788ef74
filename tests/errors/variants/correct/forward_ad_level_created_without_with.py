# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 15
# trigger: a class that measures a model's directional derivative calls fwAD.dual_level() as a plain
#   statement in its method (the object is made, never entered) before fwAD.make_dual
# source: none found; the pattern as users write it (a context manager called without `with`)
# results: slopes
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


class Sensitivity:
    def __init__(self, model):
        self.model = model

    def along(self, x, direction):
        with fwAD.dual_level():  # PRIMARY
            dual = fwAD.make_dual(x, direction)
            out = self.model(dual)
            return fwAD.unpack_dual(out).tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.Softplus(), nn.Linear(5, 2))
probe = Sensitivity(model)
x = torch.randn(4, 3)
slopes = [probe.along(x, torch.randn(4, 3)) for _ in range(2)]
