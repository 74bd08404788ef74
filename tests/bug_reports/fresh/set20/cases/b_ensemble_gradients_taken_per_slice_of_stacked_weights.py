"""An ensemble of small regressors trained together: the members' parameters are stacked with
`torch.func.stack_module_state`, one vmapped `functional_call` gives every member's loss, and a
hand-written SGD step updates the stacked tensors. The gradients are taken member by member with
`torch.autograd.grad(losses[i], params["weight"][i])`: the slice `params["weight"][i]` is a new
tensor made after the forward pass, not the tensor the loss was computed from, so autograd raises
"One of the differentiated Tensors appears to not have been used in the graph".
Source: https://github.com/pytorch/pytorch/issues/120538 ("'torch.func.vmap' incompatible with
`torch.autograd.grad` and tensor slicing": gradients of each member's loss with respect to a slice
of the stacked parameters are None (or an error), while the gradient with respect to the whole
stacked parameter works).
expect: raises"""
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
    weight_grads, bias_grads = [], []
    for i in range(MEMBERS):
        weight_grad, bias_grad = torch.autograd.grad(losses[i], [params["weight"][i], params["bias"][i]],
                                                     retain_graph=True)
        weight_grads.append(weight_grad)
        bias_grads.append(bias_grad)
    with torch.no_grad():
        params["weight"] -= 0.1 * torch.stack(weight_grads)
        params["bias"] -= 0.1 * torch.stack(bias_grads)
    history.append(losses.detach())

result = {"losses": torch.stack(history), "weight": params["weight"].detach().clone(),
          "bias": params["bias"].detach().clone()}
