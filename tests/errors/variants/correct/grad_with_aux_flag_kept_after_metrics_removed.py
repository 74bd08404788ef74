# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 18
# trigger: a functional training step built with torch.func.grad(loss_fn, has_aux=True) from a
#   config flag; the loss function, refactored to log its metrics elsewhere, now returns the loss
#   alone, through torch.func.functional_call of the model
# source: none found; the pattern as users write it (has_aux left on after a refactor)
# results: params
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, grad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIG = {"has_aux": False}

torch.manual_seed(0)
model = nn.Linear(3, 1)
params = {k: v.detach() for k, v in model.named_parameters()}


def loss_fn(params, x, y):
    pred = functional_call(model, params, (x,))
    return (pred - y).pow(2).mean()


grad_fn = grad(loss_fn, has_aux=CONFIG["has_aux"])  # PRIMARY
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    grads = grad_fn(params, x, y)
    params = {k: params[k] - 0.1 * grads[k] for k in params}
