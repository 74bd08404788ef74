# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss)
# set: 11
# helpers: lib_timing.py
# trigger: the forward pass is timed with a context-manager class from another file (a class with
#   __enter__/__exit__, not contextlib) whose __enter__ calls torch.set_grad_enabled(False) "so
#   that autograd is not timed"; the loss computed inside the block has no history
# source: none found; the pattern as users write it (timers and profilers borrowed from inference
#   code)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_timing import StepTimer  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses, seconds = [], []
for _ in range(2):
    optimizer.zero_grad()
    with StepTimer() as timer:
        loss = (model(x) - y).pow(2).mean()
    seconds.append(timer.seconds)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
