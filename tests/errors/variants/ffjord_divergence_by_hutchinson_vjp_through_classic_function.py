# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 24
# helpers: lib_flow_activations24.py
# trigger: a continuous normalizing flow (FFJORD-style) estimates the divergence of its dynamics net
#   with Hutchinson's estimator, eps^T (df/dz) eps, by torch.func.vjp of the dynamics at z; the net's
#   activation is a classic forward(ctx, x) Function in a library module
# source: none found; the pattern as users write it (FFJORD's Hutchinson trace estimator)
# results: divergence, dynamics.first.weight.grad
import os
import sys

import torch
from torch import nn
from torch.func import vjp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_flow_activations24 import SmoothLeakyTanh  # noqa: E402


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 8)
        self.second = nn.Linear(8, 3)

    def forward(self, z):
        return self.second(SmoothLeakyTanh.apply(self.first(z)))


def hutchinson_divergence(dynamics, z, eps):
    dz, pullback = vjp(dynamics, z)
    (eps_jacobian,) = pullback(eps)
    return (eps_jacobian * eps).sum(1)


torch.manual_seed(0)
dynamics = Dynamics()
z = torch.randn(5, 3)
eps = torch.randint(0, 2, (5, 3), generator=torch.Generator().manual_seed(1)).float() * 2 - 1
divergence = hutchinson_divergence(dynamics, z, eps)
divergence.mean().backward()
