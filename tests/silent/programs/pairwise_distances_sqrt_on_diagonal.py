"""A contrastive embedding trained on pairwise Euclidean distances written as the square root of
summed squared differences. The diagonal (each point with itself) is exactly 0, and the square
root's derivative there is infinite: even with the diagonal multiplied away in the loss, its
backward gives 0 * inf = NaN, every weight's gradient is NaN and the first step makes the model
NaN (the loss itself stays finite; nothing is raised)."""
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
    distances = (z[:, None, :] - z[None, :, :]).pow(2).sum(-1).sqrt()  # PRIMARY
    pull = same * distances
    push = (1 - same) * torch.relu(1.0 - distances)
    loss = ((pull + push) * off_diagonal).sum() / off_diagonal.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in embed.parameters()]
