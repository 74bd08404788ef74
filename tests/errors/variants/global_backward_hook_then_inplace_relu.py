# message: Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.
# code: AD107 (catalogue: full_backward_hook_inplace)
# set: 9
# helpers: lib_grad_watch.py
# trigger: a gradient monitor in another file registers a global full backward hook for every
#   module (torch.nn.modules.module.register_module_full_backward_hook); the model's
#   nn.ReLU(inplace=True) then writes into a hooked module's output
# source: none found; the pattern as users write it (global hooks of gradient monitoring tools)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_watch import watch_gradients  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))  # PRIMARY
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
norms = []
handle = watch_gradients(norms)
losses = []
try:
    for _ in range(2):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
finally:
    handle.remove()
