# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 29
# trigger: a helper in another file is a contextlib.contextmanager that unscales and clips the
#   gradients when its block exits; the training loop puts backward() and scaler.step() inside the
#   with block, so the exit unscales after the step
# source: none found; the pattern as users write it (gradient clipping packaged as a context manager)
# helpers: lib_clipping29.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_clipping29 import unscaled_and_clipped  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)]
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    with unscaled_and_clipped(scaler, optimizer, model.parameters(), 0.5):
        scaler.scale(loss).backward()
    scaler.step(optimizer)  # PRIMARY
    scaler.update()
    losses.append(loss.detach())
