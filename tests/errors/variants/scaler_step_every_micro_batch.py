# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 5
# trigger: gradient accumulation with GradScaler: scaler.update() and zero_grad() run every
#   `accumulation` micro-batches, but scaler.step() was left outside that condition and runs on
#   every micro-batch
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
accumulation = 2
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
losses = []
optimizer.zero_grad()
for i, (x, y) in enumerate(batches):
    loss = F.mse_loss(model(x), y) / accumulation
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # PRIMARY
    if (i + 1) % accumulation == 0:
        scaler.update()
        optimizer.zero_grad()
    losses.append(loss.item())
