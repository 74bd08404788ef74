# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# set: 13
# trigger: a training script keeps an exponential moving average of the model in a deep copy and
#   builds the optimizer on the copy's parameters instead of the trained model's; the model gets the
#   gradients, and GradScaler.step() finds none on the optimizer's parameters
# source: none found; the pattern as users write it (EMA copies made next to the optimizer)
# results: model, losses
import copy

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
ema_model = copy.deepcopy(model).requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # PRIMARY
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.lerp_(param, 0.1)
    losses.append(loss.item())
