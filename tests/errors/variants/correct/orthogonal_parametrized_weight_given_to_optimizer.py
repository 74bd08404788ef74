# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 13
# trigger: a recurrent cell keeps its hidden-to-hidden matrix orthogonal with
#   torch.nn.utils.parametrizations.orthogonal; the optimizer is given the layer's weight and bias by
#   name, and layer.weight is now computed from the parametrization's original on every access
# source: none found; the pattern as users write it (parameter lists by attribute, then a parametrization)
# results: cell, losses
import torch
from torch import nn
from torch.nn.utils.parametrizations import orthogonal


class OrthogonalCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.input = nn.Linear(2, 3)
        self.recurrent = orthogonal(nn.Linear(3, 3))

    def forward(self, xs):
        h = torch.zeros(xs.shape[1], 3)
        for x in xs:
            h = torch.tanh(self.input(x) + self.recurrent(h))
        return h


torch.manual_seed(0)
cell = OrthogonalCell()
parameters = [cell.input.weight, cell.input.bias, *cell.recurrent.parameters()]  # PRIMARY
optimizer = torch.optim.SGD(parameters, lr=0.1)
xs, y = torch.randn(4, 5, 2), torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (cell(xs) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
