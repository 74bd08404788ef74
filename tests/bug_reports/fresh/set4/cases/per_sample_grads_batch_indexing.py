"""Per-sample gradients with `vmap(grad(compute_loss))`: the model's forward indexes the batch
dimension (`x[:, 0] += 3`), but under vmap the loss function sees one example at a time, so the
batch dimension is not there.
Source: https://github.com/pytorch/functorch/issues/381 (answer: this is intended; write the loss
for a single example, e.g. give the model a batch of one with `unsqueeze(0)`).
expect: raises"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap


class TestNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 5)

    def forward(self, x):
        x = self.net(x)
        x[:, 0] += 3
        return x


torch.manual_seed(0)
model = TestNetwork()
data, targets = torch.randn(10, 5), torch.randn(10, 5)
params = {name: p.detach() for name, p in model.named_parameters()}


def compute_loss(params, data, targets):
    preds = functional_call(model, params, (data,))
    return torch.mean((preds - targets) ** 2)


per_sample_grads = vmap(grad(compute_loss), in_dims=(None, 0, 0))(params, data, targets)
result = {"per_sample_grads": [per_sample_grads[name] for name in sorted(per_sample_grads)]}
