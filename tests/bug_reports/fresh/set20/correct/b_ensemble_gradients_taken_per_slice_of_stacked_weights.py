"""An ensemble of small regressors trained together through stacked parameters and a vmapped
`functional_call`; the gradients are taken once with respect to the whole stacked tensors (the
members' losses are independent, so each member's slice of the gradient is its own gradient).
Source: https://github.com/pytorch/pytorch/issues/120538."""
import copy

import torch
import torch.nn as nn
from torch.func import functional_call, stack_module_state, vmap

torch.manual_seed(0)

MEMBERS, SAMPLES, FEATURES = 4, 16, 3

members = [nn.Linear(FEATURES, 1) for _ in range(MEMBERS)]
params, buffers = stack_module_state(members)
base = copy.deepcopy(members[0]).to("meta")


def member_loss(member_params, member_buffers, x, y):
    prediction = functional_call(base, (member_params, member_buffers), (x,))
    return ((prediction - y) ** 2).mean()


inputs = torch.randn(MEMBERS, SAMPLES, FEATURES)
targets = inputs.sum(-1, keepdim=True) + 0.1 * torch.randn(MEMBERS, SAMPLES, 1)
history = []
for step in range(20):
    losses = vmap(member_loss)(params, buffers, inputs, targets)
    weight_grads, bias_grads = torch.autograd.grad(losses.sum(), [params["weight"], params["bias"]])
    with torch.no_grad():
        params["weight"] -= 0.1 * weight_grads
        params["bias"] -= 0.1 * bias_grads
    history.append(losses.detach())

result = {"losses": torch.stack(history), "weight": params["weight"].detach().clone(),
          "bias": params["bias"].detach().clone()}
