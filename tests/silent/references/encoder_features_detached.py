import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh())
head = nn.Linear(8, 3)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for _ in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(head(encoder(x)), y)
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*encoder.parameters(), *head.parameters()]]
