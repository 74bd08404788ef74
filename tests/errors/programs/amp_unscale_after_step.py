import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for x, y in batches:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.step(optimizer)
    scaler.unscale_(optimizer)  # PRIMARY
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    scaler.update()
