# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 16
# trigger: a training step offloads saved activations with torch.autograd.graph.save_on_cpu() (saved
#   tensor hooks) around its whole body; inside it, per-sample gradient norms for clipping are taken
#   with torch.func.vmap(torch.func.grad(...)) over functional_call
# source: none found; the pattern as users write it (activation offloading around a DP-SGD step)
# results: norms, model
import torch
from torch import nn
from torch.func import functional_call, grad, vmap


def per_sample_loss(params, model, x, y):
    out = functional_call(model, params, (x.unsqueeze(0),))
    return nn.functional.mse_loss(out, y.unsqueeze(0))


def training_step(model, x, y):
    params = {name: p.detach() for name, p in model.named_parameters()}
    per_sample = vmap(grad(per_sample_loss), in_dims=(None, None, 0, 0))(params, model, x, y)  # PRIMARY
    with torch.autograd.graph.save_on_cpu():
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
    return norms


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x, y = torch.randn(6, 3), torch.randn(6, 1)
norms = training_step(model, x, y)
