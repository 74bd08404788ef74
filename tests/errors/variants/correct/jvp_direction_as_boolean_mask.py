# message: Expected tangent to be floating point or complex, but got: torch.bool
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 22
# trigger: the sensitivity of a model to its positive inputs: torch.func.jvp at x with the direction x > 0,
#   a boolean mask, as the tangent
# source: none found; the pattern as users write it
# results: out, sensitivity
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import jvp


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.Softplus(), nn.Linear(6, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


torch.manual_seed(0)
model = Scorer()
x = torch.randn(5, 4)
positive = (x > 0).to(x.dtype)  # PRIMARY
out, sensitivity = jvp(model, (x,), (positive,))
