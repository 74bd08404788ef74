# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the
#   moment.  If you were attempting to deepcopy a module, this may be because of a
#   torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 22
# trigger: a model caches its output scale in __init__ as self.scale = self.log_scale.exp() (a computed
#   tensor held on the module); the training script makes its EMA copy with copy.deepcopy(model)
# source: none found; the pattern as users write it
# results: model, ema, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import copy


class ScaledRegressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Linear(dim, 1)
        self.log_scale = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.body(x).squeeze(-1) * self.log_scale.exp()


torch.manual_seed(0)
model = ScaledRegressor(4)
ema = copy.deepcopy(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    x = torch.randn(8, 4)
    loss = (model(x) - x.sum(1)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(0.9).add_(0.1 * p)
    losses.append(loss.detach())
