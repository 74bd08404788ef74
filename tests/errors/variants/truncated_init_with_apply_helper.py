# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# set: 3
# trigger: a weight-initialisation helper in another file (lib_init.py) clips the weights of a
#   freshly built model with Tensor.apply_ over model.named_parameters()
# source: none found; the pattern as users write it
# helpers: lib_init.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_init import truncate_weights  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
truncate_weights(model, 0.2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
