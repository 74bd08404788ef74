# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 18
# trigger: the response of a 1-d signal model to a linear ramp perturbation, in forward mode with
#   fwAD.make_dual inside `with fwAD.dual_level():`; the ramp direction is torch.arange(n), int64
# source: none found; the pattern as users write it
# results: response
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
model = nn.Sequential(nn.Conv1d(1, 2, 3, padding=1), nn.Tanh())
signal = torch.randn(1, 1, 6)
ramp = torch.arange(6).view(1, 1, 6)
with fwAD.dual_level():
    out = model(fwAD.make_dual(signal, ramp))  # PRIMARY
    response = fwAD.unpack_dual(out).tangent.detach()
