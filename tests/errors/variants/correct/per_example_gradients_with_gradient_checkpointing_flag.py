# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 20
# trigger: a model with a Hugging Face-style gradient_checkpointing flag (set True to save memory for
#   training) runs each block through torch.utils.checkpoint when the flag is on; per-example gradient
#   norms for data valuation are then computed with torch.func.vmap(torch.func.grad(...)) over
#   functional_call of the same model
# source: none found; the pattern as users write it (gradient_checkpointing_enable() left on)
# results: norms
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Regressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.Tanh()) for _ in range(2)])
        self.head = nn.Linear(dim, 1)
        self.gradient_checkpointing = False

    def forward(self, x):
        for block in self.blocks:
            if self.gradient_checkpointing:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(x)


def example_loss(params, model, x, y):
    return (functional_call(model, params, (x.unsqueeze(0),)).squeeze() - y) ** 2


torch.manual_seed(0)
model = Regressor(4)
model.gradient_checkpointing = False  # PRIMARY
params = {name: p.detach() for name, p in model.named_parameters()}
x, y = torch.randn(6, 4), torch.randn(6)
per_example = vmap(grad(example_loss), in_dims=(None, None, 0, 0))(params, model, x, y)
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_example.values()]).norm(dim=0)
