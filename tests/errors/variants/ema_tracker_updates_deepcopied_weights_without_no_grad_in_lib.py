# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 21
# trigger: an EMA helper in another file keeps a copy.deepcopy of the model (whose parameters are
#   leaves that require grad) and updates it with e.mul_(decay).add_(p.detach(), alpha=1 - decay)
#   in a method without torch.no_grad(); called after every optimizer step
# source: none found; the pattern as users write it (model EMA helpers)
# helpers: lib_ema_tracker.py
# results: model, ema.module, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_ema_tracker import ModelEma  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
ema = ModelEma(model, decay=0.9)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ema.update(model)
    losses.append(loss.detach())
