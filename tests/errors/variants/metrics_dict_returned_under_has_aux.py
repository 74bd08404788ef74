# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is
#   True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 22
# trigger: a functional training step takes grad_and_value(compute_loss, has_aux=True) over functional_call
#   of the model, and compute_loss returns one dict of metrics with the loss among them ({"loss":
#   ..., "accuracy": ...})
# source: none found; the pattern as users write it
# results: grads_list, accuracies
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import functional_call, grad_and_value


torch.manual_seed(0)
model = nn.Linear(5, 3)
params = {k: v.detach() for k, v in model.named_parameters()}


def compute_loss(params, x, y):
    logits = functional_call(model, params, (x,))
    loss = nn.functional.cross_entropy(logits, y)
    accuracy = (logits.argmax(1) == y).float().mean()
    return {"loss": loss, "accuracy": accuracy}  # PRIMARY


step = grad_and_value(compute_loss, has_aux=True)
grads_list, accuracies = [], []
for i in range(3):
    x = torch.randn(6, 5)
    y = torch.randint(0, 3, (6,))
    grads, (loss, metrics) = step(params, x, y)
    params = {k: params[k] - 0.1 * grads[k] for k in params}
    grads_list.extend(grads.values())
    accuracies.append(metrics["accuracy"])
