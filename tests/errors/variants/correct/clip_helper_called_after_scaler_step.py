# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 3
# trigger: gradient clipping lives in a helper that unscales and clips; the loop calls it after
#   scaler.step(), right before scaler.update()
# source: https://github.com/pytorch/examples/issues/1196 (unscale_ before clip_grad_norm_)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


def clip_gradients(scaler, optimizer, parameters, max_norm):
    scaler.unscale_(optimizer)
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1) * 5) for _ in range(3)]
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    clip_gradients(scaler, optimizer, model.parameters(), 0.5)  # PRIMARY
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
