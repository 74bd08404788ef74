# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 21
# trigger: a probe perturbs only the positive input features: its direction is
#   torch.where(x > 0, 1, 0) (Python ints, so int64), given to torch.func.jvp of a small model
# source: none found; the pattern as users write it
# results: out, sensitivity
import os
import sys

import torch
from torch import nn
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 3), nn.Softplus(), nn.Linear(3, 1))
x = torch.randn(4, 5)
direction = torch.where(x > 0, 1, 0)  # PRIMARY
out, sensitivity = jvp(model, (x,), (direction,))
