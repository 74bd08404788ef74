# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 13
# helpers: lib_probes.py
# trigger: a probing helper in another file makes the dual tensor, runs the model and unpacks the
#   tangent without a `with fwAD.dual_level():` block; the training script calls it for a smoothness
#   probe along random directions
# source: none found; the pattern as users write it (forward-mode helpers factored out of a tutorial)
# results: slopes
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_probes import directional_derivative  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Softplus(), nn.Linear(4, 1))
x = torch.randn(5, 3)
slopes = []
for _ in range(2):
    direction = torch.nn.functional.normalize(torch.randn(5, 3), dim=1)
    slopes.append(directional_derivative(model, x, direction).abs().mean().item())
