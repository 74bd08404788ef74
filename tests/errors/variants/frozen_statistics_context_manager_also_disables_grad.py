# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss)
# set: 10
# helpers: lib_context.py
# trigger: fine-tuning on small batches with BatchNorm's statistics frozen, through a context manager
#   from another file (contextlib.contextmanager) that puts the model in eval mode and also opens
#   torch.no_grad() around its yield; the loss computed inside the with block has no history
# source: none found; the pattern as users write it (context managers that freeze BatchNorm)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_context import frozen_statistics  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 1))
model(torch.randn(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 3), torch.randn(2, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    with frozen_statistics(model):
        loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
