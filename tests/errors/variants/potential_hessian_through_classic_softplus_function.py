# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 22
# helpers: lib_softplus_fn.py
# trigger: the Hessian of a pairwise potential energy with torch.func.hessian, the energy going through a
#   classic forward(ctx, x) softplus Function in a library module
# source: none found; the pattern as users write it
# results: curvature
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import hessian

from lib_softplus_fn import StableSoftplus


def energy(positions):
    d = positions[:, None, :] - positions[None, :, :]
    r2 = (d * d).sum(-1) + torch.eye(len(positions))
    return StableSoftplus.apply(1.0 - r2).sum()


torch.manual_seed(0)
positions = torch.randn(3, 2, dtype=torch.float64)
curvature = hessian(energy)(positions)
