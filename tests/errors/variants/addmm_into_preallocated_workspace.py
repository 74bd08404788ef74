# message: addmm(): functions with out=... arguments don't support automatic differentiation, but
#   one of the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 6
# trigger: a layer in another file (lib_kernels.py) computes torch.addmm(..., out=self.workspace)
#   into a buffer allocated once, as a statement, and returns the buffer
# source: none found; the pattern as users write it
# helpers: lib_kernels.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_kernels import PreallocatedLinear  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(PreallocatedLinear(4, 3, batch=5), nn.Tanh(), nn.Linear(3, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
