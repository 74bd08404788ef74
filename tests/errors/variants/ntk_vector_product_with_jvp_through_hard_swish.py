# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# helpers: lib_hard_swish.py
# set: 19
# trigger: a neural-tangent-kernel vector product pushes a parameter direction through the model with
#   torch.func.jvp over functional_call; the model's activation is a hard-swish Function in a library
#   module written with setup_context and generate_vmap_rule, backward only
# source: none found; the pattern as users write it
# results: out, tangent
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import functional_call, jvp

from lib_hard_swish import HardSwish


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Linear(4, 1)

    def forward(self, x):
        return self.b(HardSwish.apply(self.a(x)))  # PRIMARY


torch.manual_seed(0)
model = Net()
params = {name: p.detach() for name, p in model.named_parameters()}
directions = {name: torch.randn_like(p) for name, p in params.items()}
x = torch.randn(5, 3)
out, tangent = jvp(lambda p: functional_call(model, p, (x,)), (params,), (directions,))
