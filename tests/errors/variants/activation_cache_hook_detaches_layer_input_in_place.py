# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not
#   supported, please use out-of-place `.detach()` instead
# code: AD139 (catalogue: detach_saved_inplace)
# set: 10
# helpers: lib_activation_cache.py
# trigger: an activation cache in another file registers a forward hook on the model's last layer
#   that keeps the layer's input with inputs[0].detach_(); the layer (and the ReLU before it) saved
#   that tensor for backward
# source: none found; the pattern as users write it (forward hooks that collect activations)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_activation_cache import cache_inputs  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
features = []
handle = cache_inputs(model[2], features)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
handle.remove()
