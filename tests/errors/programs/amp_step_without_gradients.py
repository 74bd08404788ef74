import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.rand(4, 3), torch.rand(4, 4)) for _ in range(2)]
for x, y in batches:
    optimizer.zero_grad()
    distance = ((model(x) - y) ** 2).sum(-1).sqrt().mean().item()  # measured outside the graph
    loss = torch.tensor(distance, requires_grad=True)  # PRIMARY
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
