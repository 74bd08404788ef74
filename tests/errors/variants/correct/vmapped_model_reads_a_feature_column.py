# message: too many indices for tensor of dimension 1
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 4
# trigger: per-sample gradients with vmap(grad(...)) and functional_call over a model whose
#   forward reads a column of its batch (x[:, :1]); under vmap each x is one row
# source: none found; the pattern as users write it
# results: per_sample
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class GatedRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        gate = torch.sigmoid(x[:, :1])
        return self.lin(x) * gate


def sample_loss(params, model, x, y):
    return F.mse_loss(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))  # PRIMARY


torch.manual_seed(0)
model = GatedRegressor()
params = {name: p.detach() for name, p in model.named_parameters()}
x, y = torch.randn(5, 3), torch.randn(5, 1)
gradients = vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, model, x, y)
per_sample = [gradients["lin.weight"], gradients["lin.bias"]]
