# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is
#   True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 24
# trigger: a functional training loop over torch.func.functional_call takes
#   torch.func.grad(compute_loss, has_aux=True); compute_loss was refactored to return a
#   @dataclass StepResult(loss, logits) instead of the pair (loss, logits)
# source: none found; the pattern as users write it (a dataclass for a step's outputs)
# results: params["weight"], params["bias"], history
import os
import sys
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@dataclass
class StepResult:
    loss: torch.Tensor
    logits: torch.Tensor


torch.manual_seed(0)
model = nn.Linear(4, 3)
params = {name: p.detach().clone() for name, p in model.named_parameters()}
inputs = torch.randn(6, 4)
labels = torch.tensor([0, 1, 2, 0, 1, 2])


def compute_loss(params, inputs, labels):
    logits = functional_call(model, params, (inputs,))
    return F.cross_entropy(logits, labels), logits


history = []
for step in range(3):
    grads, logits = grad(compute_loss, has_aux=True)(params, inputs, labels)
    params = {name: params[name] - 0.1 * grads[name] for name in params}
    history.append(logits.argmax(1))
