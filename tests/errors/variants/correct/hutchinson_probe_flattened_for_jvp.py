# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [4, 3] while the given forward gradient is of size
#   [12].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 22
# trigger: a Hutchinson-style directional-derivative estimate draws a flat Rademacher probe over all of the
#   batch's entries (torch.randint(0, 2, (x.numel(),)) * 2 - 1, made float) and gives it to
#   torch.func.jvp with the [4, 3] batch
# source: none found; the pattern as users write it
# results: estimate
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import jvp


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 3))
x = torch.randn(4, 3)
probe = (torch.randint(0, 2, (x.numel(),)) * 2 - 1).float().view_as(x)  # PRIMARY
out, tangent_out = jvp(model, (x,), (probe,))
estimate = (tangent_out * probe.view_as(x)).sum()
