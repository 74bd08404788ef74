# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev,
#   ...), it must override the setup_context staticmethod.
# code: AD231 (catalogue: function_without_setup_context)
# set: 21
# trigger: a Gauss-Newton step takes the Jacobian of a binarised network's residuals with
#   torch.func.jacrev over torch.func.functional_call; the network's straight-through sign is a
#   classic forward(ctx, x) Function in a library module
# source: none found; the pattern as users write it (straight-through estimators of binarised nets)
# helpers: lib_sign_ste.py
# results: residual_jacobian
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, jacrev

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_sign_ste import SignSTE  # noqa: E402


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 4)
        self.second = nn.Linear(4, 2)

    def forward(self, x):
        return self.second(SignSTE.apply(self.first(x)))


torch.manual_seed(0)
model = BinaryNet()
x, y = torch.randn(5, 3), torch.randn(5, 2)
params = {name: p.detach() for name, p in model.named_parameters()}


def residuals(p):
    return (functional_call(model, p, (x,)) - y).flatten()


residual_jacobian = list(jacrev(residuals)(params).values())
