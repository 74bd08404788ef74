# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 21
# trigger: an embedding function normalises its output to unit length inside
#   `with torch.no_grad():` (meant to keep the norm "out of the gradient"); its Jacobian is taken
#   with torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it
# results: jac
import os
import sys

import torch
from torch import nn
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh())


def embed(x):
    h = encoder(x)
    h = h / h.norm()  # PRIMARY
    return h


x = torch.randn(3)
jac = jacobian(embed, x, strict=True)
