# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 5
# trigger: each parameter group has its own clipping norm; the loop over
#   optimizer.param_groups unscales the optimizer before clipping each group, so the second
#   group unscales again
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD([
    {"params": model[0].parameters(), "max_norm": 0.5},
    {"params": model[2].parameters(), "max_norm": 1.0},
], lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(6, 3), torch.randn(6, 1) * 3
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    for group in optimizer.param_groups:
        scaler.unscale_(optimizer)  # PRIMARY
        torch.nn.utils.clip_grad_norm_(group["params"], group["max_norm"])
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
