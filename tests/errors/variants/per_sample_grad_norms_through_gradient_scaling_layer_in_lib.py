# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 23
# helpers: lib_grad_scale23.py
# trigger: a two-branch model scales the gradient reaching its shared trunk with a classic
#   forward(ctx, x, scale) Function from a library module; per-sample gradient norms (for clipping
#   statistics) are taken with torch.func.vmap(torch.func.grad(...)) over functional_call
# source: none found; the pattern as users write it
# results: norms
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_grad_scale23 import scale_gradient  # noqa: E402


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 6)
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        return self.head(scale_gradient(torch.tanh(self.trunk(x)), 0.5))


torch.manual_seed(0)
model = TwoBranch()
params = {name: p.detach() for name, p in model.named_parameters()}


def loss_of_one(params, x, y):
    out = functional_call(model, params, (x[None],))
    return (out.squeeze() - y) ** 2


xs, ys = torch.randn(5, 4), torch.randn(5)
per_sample = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, xs, ys)
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
