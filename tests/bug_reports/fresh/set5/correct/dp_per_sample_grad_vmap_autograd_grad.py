"""Differentially private training needs per-sample gradient norms: the code maps
`torch.autograd.grad` over the batch with `vmap`, which PyTorch does not support (inside vmap the
per-sample loss has no graph to the weights).
Source: https://github.com/pytorch/pytorch/issues/53445 ("Unhelpful error message when vmap is
called on autograd.grad"; the supported way is torch.func's own `grad` transform under `vmap`
with the parameters passed functionally).
expect: raises"""
import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)
model = nn.Linear(6, 1)
x = torch.randn(5, 6)
y = torch.randn(5, 1)
params = {k: v.detach() for k, v in model.named_parameters()}


def per_sample_loss(p, xi, yi):
    return ((functional_call(model, p, (xi,)) - yi) ** 2).sum()


grads_by_name = torch.vmap(torch.func.grad(per_sample_loss), in_dims=(None, 0, 0))(params, x, y)
grads = [grads_by_name[name] for name, _ in model.named_parameters()]
norms = torch.sqrt(sum((g.reshape(5, -1) ** 2).sum(1) for g in grads))
clipped = [g * (1.0 / torch.clamp(norms / 1.0, min=1.0)).view(-1, *[1] * (g.dim() - 1)) for g in grads]
result = {"norms": norms, "mean_grads": [c.mean(0) for c in clipped]}
