# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 11
# helpers: lib_quiet.py
# trigger: the project's own decorator in another file (@quiet, a functools.wraps wrapper that runs
#   the function inside torch.no_grad()) was put on the loss helper because evaluation used it
#   first; training computes its loss through the same helper
# source: none found; the pattern as users write it (project decorators that hide a no_grad())
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_quiet import quiet  # noqa: E402


@quiet  # PRIMARY
def regression_loss(model, x, y):
    return (model(x) - y).pow(2).mean()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = regression_loss(model, x, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
