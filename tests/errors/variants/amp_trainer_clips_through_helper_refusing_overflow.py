# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.
#   To disable this error and scale the gradients by the non-finite norm anyway, set
#   `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 14
# helpers: lib_grad_tools.py
# trigger: a Trainer-like class with mixed precision (GradScaler) clips through a helper in another
#   file that passes error_if_nonfinite=True; the first steps at the scaler's initial scale overflow
#   in float16, which GradScaler expects and skips
# source: none found; the pattern as users write it (a "safe" clipping helper reused under AMP)
# results: weights
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_tools import clip_gradients  # noqa: E402


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = self.model(x)
        loss = (out.float() - y).pow(2).mean()
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        clip_gradients(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
trainer = Trainer(model)
x, y = torch.randn(8, 3) * 10, torch.randn(8, 2)
for _ in range(6):
    trainer.training_step(x, y)
weights = [p.detach().clone() for p in model.parameters()]
