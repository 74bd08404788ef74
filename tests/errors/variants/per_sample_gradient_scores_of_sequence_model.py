# message: too many indices for tensor of dimension 2
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 8
# trigger: data pruning scores each example by the norm of its own gradient with
#   torch.func.vmap(torch.func.grad(...)) over functional_call; the model's forward, written for a
#   batch of sequences, takes the last time step with x[:, -1, :], and under vmap it sees one
#   sequence without the batch dimension
# source: none found; the pattern as users write it (per-sample gradients from the torch.func
#   tutorial, applied to a model written for batches)
# results: scores
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class LastStepRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 1)

    def forward(self, x):
        return self.proj(torch.tanh(x[:, -1, :]))


def sample_loss(params, x, y):
    return F.mse_loss(functional_call(model, params, (x,)), y)  # PRIMARY


torch.manual_seed(0)
model = LastStepRegressor()
params = {name: p.detach() for name, p in model.named_parameters()}
xs, ys = torch.randn(4, 5, 3), torch.randn(4, 1)
per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, xs, ys)
scores = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
