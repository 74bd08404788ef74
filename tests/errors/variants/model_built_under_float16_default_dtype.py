# message: Attempting to unscale FP16 gradients.
# code: AD151 (catalogue: amp_float16_parameters)
# set: 10
# helpers: lib_build.py
# trigger: a builder in another file switches the default dtype to float16
#   (torch.set_default_dtype) while it creates the layers, then switches it back; the model is
#   trained with GradScaler, whose unscale_() before clipping refuses float16 gradients
# source: none found; the pattern as users write it (set_default_dtype around model construction)
# results: losses, model
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_build import build_regressor  # noqa: E402

torch.manual_seed(0)
model = build_regressor()
dtype = next(model.parameters()).dtype
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x.to(dtype)).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
