# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 23
# results: hvp
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class HvpProbe:
    def __init__(self, model):
        self.model = model

    def hvp(self, x, v):
        params = {name: p.detach() for name, p in self.model.named_parameters()}

        def loss_grad(inp):
            return torch.func.grad(lambda z: torch.func.functional_call(self.model, params, (z,)).pow(2).sum())(inp)

        with fwAD.dual_level():  # PRIMARY
            dual = fwAD.make_dual(x, v)
            return fwAD.unpack_dual(loss_grad(dual)).tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
probe = HvpProbe(model)
hvp = probe.hvp(torch.randn(2, 3), torch.randn(2, 3))
