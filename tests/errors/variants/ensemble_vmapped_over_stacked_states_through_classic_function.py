# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev,
#   ...), it must override the setup_context staticmethod.
# code: AD231 (catalogue: function_without_setup_context)
# helpers: lib_soft_sign.py
# set: 19
# trigger: an ensemble of small models is evaluated in one call with torch.func.stack_module_state and
#   torch.func.vmap over functional_call; the models' activation is a soft-sign Function written the
#   classic way (forward(ctx, x)) in a library module
# source: none found; the pattern as users write it
# results: predictions
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import functional_call, stack_module_state, vmap

from lib_soft_sign import SoftSign


class Member(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(SoftSign.apply(self.hidden(x)))


torch.manual_seed(0)
members = [Member() for _ in range(3)]
params, buffers = stack_module_state(members)
base = Member().to("meta")


def predict(p, b, x):
    return functional_call(base, (p, b), (x,))


x = torch.randn(5, 3)
predictions = vmap(predict, in_dims=(0, 0, None))(params, buffers, x)
