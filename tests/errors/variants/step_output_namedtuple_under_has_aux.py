# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is
#   True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 20
# trigger: a functional training step's loss function returns a typing.NamedTuple StepOutput(loss,
#   logits, correct) (three fields, a tuple of three) to torch.func.grad_and_value(..., has_aux=True),
#   which wants exactly (output, aux)
# source: none found; the pattern as users write it (named step outputs)
# results: list(params.values()), history
import os
import sys
from typing import NamedTuple

import torch
from torch import nn
from torch.func import functional_call, grad_and_value

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class StepOutput(NamedTuple):
    loss: torch.Tensor
    logits: torch.Tensor
    correct: torch.Tensor


def loss_fn(params, model, x, y):
    logits = functional_call(model, params, (x,))
    loss = nn.functional.cross_entropy(logits, y)
    return StepOutput(loss, logits, (logits.argmax(-1) == y).sum())  # PRIMARY


torch.manual_seed(0)
model = nn.Linear(4, 3)
params = {name: p.detach() for name, p in model.named_parameters()}
step = grad_and_value(loss_fn, has_aux=True)
history = []
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    grads, (loss, (logits, correct)) = step(params, model, x, y)
    params = {name: params[name] - 0.1 * grads[name] for name in params}
    history.append((loss, correct))
