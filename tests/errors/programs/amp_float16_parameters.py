import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder, head = nn.Linear(3, 3), nn.Linear(3, 1)
encoder.half()  # frozen: float16 is fine for it
encoder.requires_grad_(False)
head.to(dtype=torch.float16)  # PRIMARY
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for x, y in batches:
    optimizer.zero_grad()
    features = encoder(x.half())
    loss = F.mse_loss(head(features.to(head.weight.dtype)).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
