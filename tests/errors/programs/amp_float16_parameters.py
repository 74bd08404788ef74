import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1).half()  # PRIMARY
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
for x, y in batches:
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(model(x.half()).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
