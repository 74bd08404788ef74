# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open
#   an issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 15
# trigger: per-sample gradient norms with vmap(grad(...)) over functional_call of a model whose
#   forward wraps its middle block in torch.utils.checkpoint.checkpoint(use_reentrant=False) to save
#   memory in training
# source: none found; the pattern as users write it (Opacus-like per-sample gradients of a
#   checkpointed model)
# results: norms
import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.utils.checkpoint import checkpoint


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.block = nn.Sequential(nn.Linear(8, 8), nn.GELU())
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = self.inp(x)
        h = self.block(h)  # PRIMARY
        return self.out(h)


torch.manual_seed(0)
model = Model()
params = {name: p.detach() for name, p in model.named_parameters()}
xs = torch.randn(6, 4)
ys = torch.randn(6, 1)


def sample_loss(params, x, y):
    pred = functional_call(model, params, (x.unsqueeze(0),))
    return nn.functional.mse_loss(pred, y.unsqueeze(0))


per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, xs, ys)
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
