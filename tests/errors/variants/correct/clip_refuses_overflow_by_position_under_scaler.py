# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.
#   To disable this error and scale the gradients by the non-finite norm anyway, set
#   `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 18
# trigger: clip_grad_norm_ is given its arguments by position, clip_grad_norm_(params, 1.0, 2.0,
#   True), the fourth being error_if_nonfinite, after scaler.unscale_ under a GradScaler whose first
#   steps overflow, as GradScaler expects and skips
# source: none found; the pattern as users write it (positional arguments copied from a signature)
# results: weights
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def train_step(model, optimizer, scaler, x, y):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0, 2.0, False)  # PRIMARY
    scaler.step(optimizer)
    scaler.update()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
for _ in range(6):
    train_step(model, optimizer, scaler, torch.randn(8, 3) * 10, torch.randn(8, 2))
weights = [p.detach().clone() for p in model.parameters()]
