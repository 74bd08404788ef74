# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the
#   moment.  If you were attempting to deepcopy a module, this may be because of a
#   torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 25
# trigger: a Lightning-style module keeps its last loss on self in training_step (for logging); stochastic
#   weight averaging creates torch.optim.swa_utils.AveragedModel(model) at the SWA start epoch,
#   which deep-copies the module with the loss tensor (in its graph) on it
# source: none found; the pattern as users write it (SWA started after a few epochs)
# results: model, losses, averaged
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Regressor(nn.Module):
    """Lightning-style: the module computes its own loss in training_step and keeps it for logging."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.last_loss = None

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.last_loss = loss  # PRIMARY
        return loss


torch.manual_seed(0)
model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
batch = (torch.randn(10, 4), torch.randn(10, 1))
swa_start = 2
swa_model = None
losses = []
for epoch in range(4):
    loss = model.training_step(batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if epoch >= swa_start:
        if swa_model is None:
            swa_model = AveragedModel(model)
        else:
            swa_model.update_parameters(model)
averaged = [p.detach().clone() for p in swa_model.parameters()]
