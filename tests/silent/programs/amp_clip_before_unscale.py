"""Mixed-precision regression: the gradients are clipped by value right after the scaled
backward(), while they are still multiplied by the loss scale, so the cap of 0.05 really caps
them at 0.05 / 65536 and the model barely moves."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(3)]
for features, targets in batches:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(features), targets)).backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.05)  # PRIMARY
    scaler.step(optimizer)
    scaler.update()
result = [p.detach().clone() for p in model.parameters()]
