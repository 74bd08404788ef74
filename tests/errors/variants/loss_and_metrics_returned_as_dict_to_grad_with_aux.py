# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 14
# trigger: a functional training step returns its loss and metrics in one dict ({"loss": ...,
#   "accuracy": ...}), as the logging code wants them, and is given to torch.func.grad(has_aux=True)
# source: none found; the pattern as users write it (dict outputs from a step function)
# results: list(params.values()), history
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad

torch.manual_seed(0)
model = nn.Linear(4, 3)


def step_outputs(params, x, labels):
    logits = functional_call(model, params, (x,))
    loss = F.cross_entropy(logits, labels)
    accuracy = (logits.argmax(dim=1) == labels).float().mean()
    return {"loss": loss, "accuracy": accuracy}  # PRIMARY


params = {name: p.detach() for name, p in model.named_parameters()}
x, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 1, 0, 2])
history = []
for _ in range(3):
    grads, metrics = grad(step_outputs, has_aux=True)(params, x, labels)
    params = {name: p - 0.5 * grads[name] for name, p in params.items()}
    history.append(metrics["accuracy"])
