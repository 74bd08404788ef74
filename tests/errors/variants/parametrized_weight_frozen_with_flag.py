# message: you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 8
# trigger: a mixing layer's weight is kept symmetric by torch.nn.utils.parametrize; freezing it
#   with layer.weight.requires_grad = False sets the flag of the computed weight, not of the
#   parameter it is made from (parametrizations.weight.original)
# source: https://github.com/facebookresearch/fairscale/issues/1126 (module.weight.requires_grad =
#   not freeze on a weight that is not a leaf), re-written with a parametrization
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils import parametrize


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(0, 1)


def freeze_mixing(layer):
    layer.weight.requires_grad = False  # PRIMARY


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
parametrize.register_parametrization(model[0], "weight", Symmetric())
freeze_mixing(model[0])
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
