# message: Attempting to unscale FP16 gradients.
# code: AD151 (catalogue: amp_float16_parameters)
# set: 8
# helpers: lib_memory.py
# trigger: a helper in another file halves the whole model (model.half()) to save memory; the model
#   is then trained with GradScaler, whose unscale_() before clipping refuses float16 gradients
# source: none found; the pattern as users write it (a model made .half() and trained with GradScaler)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_memory import save_memory  # noqa: E402


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        x = x.to(self.body.weight.dtype)
        return self.out(torch.relu(self.body(x))).float()


torch.manual_seed(0)
model = save_memory(Regressor())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
