import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
for i, (x, y) in enumerate(batches):
    scaler.scale(F.mse_loss(model(x), y) / 2).backward()
    scaler.unscale_(optimizer)  # PRIMARY
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    if (i + 1) % 2 == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
