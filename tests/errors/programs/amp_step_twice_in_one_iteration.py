import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
for x, y in batches:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x[:2]), y[:2])).backward()
    scaler.step(optimizer)
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x[2:]), y[2:])).backward()
    scaler.step(optimizer)  # PRIMARY
    scaler.update()
