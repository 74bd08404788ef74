# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD141 (catalogue: func_autograd_grad_inside)
# set: 3
# trigger: per-sample gradients for clipping (DP-SGD style): torch.func.functional_call runs the
#   model on one sample with detached parameters, torch.autograd.grad is asked for the gradient,
#   and the function is vmapped over the batch
# source: none found; the pattern as users write it
# results: per_sample, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Linear(3, 1)
params = {name: p.detach() for name, p in model.named_parameters()}


def sample_grads(params, x, y):
    loss = F.mse_loss(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))
    return dict(zip(params, torch.autograd.grad(loss, list(params.values()))))  # PRIMARY


x, y = torch.randn(5, 3), torch.randn(5, 1)
per_sample = vmap(sample_grads, in_dims=(None, 0, 0))(params, x, y)
per_sample = [per_sample[name] for name in sorted(per_sample)]
