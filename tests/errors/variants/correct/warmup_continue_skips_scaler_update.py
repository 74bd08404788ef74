# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 28
# trigger: a training loop with GradScaler and a hand-written learning-rate warm-up: during the
#   warm-up steps the loop scales the learning rate after scaler.step() and `continue`s to the next
#   batch, which skips the scaler.update() at the end of the iteration
# source: none found; the pattern as users write it (an early `continue` in a warm-up branch)
# results: losses, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)
warmup_steps, base_lr = 2, 0.1
losses = []
for step in range(4):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    losses.append(loss.item())
    if step < warmup_steps:
        for group in optimizer.param_groups:
            group["lr"] = base_lr * (step + 2) / (warmup_steps + 1)
        scaler.update()  # PRIMARY
        continue
    scaler.update()
