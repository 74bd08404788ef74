# message: attempting to assign a gradient of size '[4]' to a tensor of size '[4, 4]'. Please ensure that
#   the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 27
# trigger: a communication-efficient training loop (no process group: the worker's side only) compresses
#   each gradient with a top-k callback in another file, after backward() and before step(); the callback
#   scatters the kept values into a dense tensor for its error-feedback residual, then assigns the bare
#   top-k values (size [k]) to p.grad instead of that dense tensor
# source: none found; the pattern as users write it (top-k sparsification with error feedback)
# helpers: lib_compression27.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_compression27 import TopKCompression  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
compression = TopKCompression(model)
losses = []
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    compression.on_after_backward(model)
    optimizer.step()
    losses.append(loss.item())
