# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# helpers: lib_reparam.py
# set: 17
# trigger: a script builds its optimizer on model.parameters(), then turns on weight normalisation with a
#   library helper (lib_reparam.py) that applies torch.nn.utils.parametrizations.weight_norm to every
#   Linear; the parametrisation registers new parameters (original0, original1) that the optimizer does
#   not hold, and the bias-free layers leave it no parameter with a gradient, so GradScaler.step() fails
# source: none found; the pattern as users write it (a reparametrisation switched on after the optimizer)
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_reparam import add_weight_norm  # noqa: E402


def build_model():
    return nn.Sequential(nn.Linear(4, 8, bias=False), nn.Tanh(), nn.Linear(8, 2, bias=False))


torch.manual_seed(0)
model = build_model()
model = add_weight_norm(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # PRIMARY
scaler = torch.amp.GradScaler("cpu")
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    loss = nn.functional.mse_loss(out.float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
