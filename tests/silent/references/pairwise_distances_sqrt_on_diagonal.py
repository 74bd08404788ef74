"""Distances with an epsilon under the root: the diagonal's gradient is 0, not NaN."""
import torch
import torch.nn as nn

torch.manual_seed(0)
embed = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(embed.parameters(), lr=0.1)
points, labels = torch.randn(10, 5), torch.randint(0, 2, (10,))
same = (labels[:, None] == labels[None, :]).float()
off_diagonal = 1 - torch.eye(10)
for step in range(3):
    z = embed(points)
    distances = (z[:, None, :] - z[None, :, :]).pow(2).sum(-1).clamp(min=1e-12).sqrt()
    pull = same * distances
    push = (1 - same) * torch.relu(1.0 - distances)
    loss = ((pull + push) * off_diagonal).sum() / off_diagonal.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in embed.parameters()]
