# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 26
# trigger: mixed precision with gradient accumulation over two micro-batches: at each accumulation
#   boundary the loop calls scaler.step(), then, every log_every optimizer steps, logs the gradient norm
#   through a helper in another file that unscales first, then scaler.update()
# source: none found; the pattern as users write it (periodic gradient-norm logging added after the
#   optimizer step of an accumulation loop)
# helpers: lib_grad_norm26.py
# results: grad_norms, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_norm26 import unscaled_grad_norm  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)
micro_batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(8)]
accumulation, log_every = 2, 2
grad_norms = []
optimizer_steps = 0
for index, (inputs, targets) in enumerate(micro_batches):
    loss = F.mse_loss(model(inputs), targets) / accumulation
    scaler.scale(loss).backward()
    if (index + 1) % accumulation == 0:
        scaler.step(optimizer)
        optimizer_steps += 1
        if optimizer_steps % log_every == 0:
            grad_norms.append(unscaled_grad_norm(scaler, optimizer, model.parameters()))  # PRIMARY
        scaler.update()
        optimizer.zero_grad()
