# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 7
# trigger: scaler.update() ended up indented under the `if step % log_every == 0:` logging block,
#   so on the steps that do not log, scaler.step() runs again without update()
# source: none found; the pattern as users write it
# results: losses, logged, model
import torch
from torch import nn
import torch.nn.functional as F


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
log_every = 2
losses, logged = [], []
for step, (x, y) in enumerate(batches):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    losses.append(loss.item())
    if step % log_every == 0:
        logged.append(loss.item())
    scaler.update()  # PRIMARY
