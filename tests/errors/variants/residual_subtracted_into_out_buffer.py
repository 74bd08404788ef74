# message: sub(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 9
# helpers: lib_residuals.py
# trigger: a loss helper in another file keeps a preallocated residual buffer and writes
#   prediction - target into it with torch.sub(..., out=...) to save an allocation
# source: none found; the pattern as users write it (preallocated buffers in loss code)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_residuals import SquaredResidualLoss  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 2)
criterion = SquaredResidualLoss((6, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
