# message: too many indices for tensor of dimension 1
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 3
# trigger: a module's forward, written for a batch, slices features with x[:, :2]; per-sample
#   gradients call it through functional_call under vmap(grad(...)), one sample at a time
# source: none found; the pattern as users write it
# results: per_sample
import torch
from torch import nn
from torch.func import functional_call, grad, vmap


class TwoFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x):
        return self.linear(x[:, :2])


torch.manual_seed(0)
model = TwoFeatures()
params = {name: p.detach() for name, p in model.named_parameters()}


def loss_fn(params, x, y):
    return (functional_call(model, params, (x,)) - y).pow(2).sum()  # PRIMARY


x, y = torch.randn(5, 3), torch.randn(5, 1)
per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
per_sample = [per_sample[name] for name in sorted(per_sample)]
