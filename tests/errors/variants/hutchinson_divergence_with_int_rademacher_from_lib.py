# message: Expected tangent to be floating point or complex, but got: torch.int32
# code: AD239 (catalogue: jvp_integer_tangent)
# helpers: lib_probe_draws.py
# set: 19
# trigger: a vector field's divergence is estimated with Hutchinson's trick through torch.func.jvp; the
#   probe comes from a library helper that turns a comparison into signs with .int() (int32)
# source: none found; the pattern as users write it
# results: divergence
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import jvp

from lib_probe_draws import rademacher_like


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 3))

    def divergence(self, x, samples=4):
        total = torch.zeros(x.shape[0])
        for _ in range(samples):
            probe = rademacher_like(x)
            _, jv = jvp(self.net, (x,), (probe,))
            total = total + (jv * probe).sum(-1)
        return total / samples


torch.manual_seed(0)
field = Field()
divergence = field.divergence(torch.randn(5, 3))
