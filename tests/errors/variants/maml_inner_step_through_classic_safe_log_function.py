# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod.
# code: AD231 (catalogue: function_without_setup_context)
# helpers: lib_safe_log.py
# set: 20
# trigger: a MAML-style inner loop adapts a Poisson regressor with torch.func.grad over
#   torch.func.functional_call; the negative log-likelihood calls a clipped-gradient log written as a
#   classic autograd.Function (forward(ctx, x, floor)) in another file
# source: none found; the pattern as users write it (functional inner loops over old Functions)
# results: list(adapted.values()), model
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, grad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_safe_log import safe_log  # noqa: E402


def poisson_nll(params, model, x, counts):
    rate = functional_call(model, params, (x,)).squeeze(-1).exp()
    return (rate - counts * safe_log(rate)).mean()


def adapt(model, x, counts, steps=2, lr=0.1):
    params = {name: p.detach() for name, p in model.named_parameters()}
    for _ in range(steps):
        grads = grad(poisson_nll)(params, model, x, counts)
        params = {name: params[name] - lr * grads[name] for name in params}
    return params


torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(10, 3)
counts = torch.poisson(torch.full((10,), 2.0))
adapted = adapt(model, x, counts)
