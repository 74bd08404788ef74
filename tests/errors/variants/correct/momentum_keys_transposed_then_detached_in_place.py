import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
query_encoder = nn.Linear(4, 3)
key_encoder = nn.Linear(4, 3)
queue = torch.randn(3, 8)
optimizer = torch.optim.SGD(query_encoder.parameters(), lr=0.1)
losses = []
for step in range(2):
    x = torch.randn(4, 4)
    queries = F.normalize(query_encoder(x), dim=1)
    keys = F.normalize(key_encoder(x + 0.05 * torch.randn(4, 4)), dim=1)
    positives = (queries * keys.detach()).sum(1, keepdim=True)
    negatives = queries @ queue
    logits = torch.cat([positives, negatives], dim=1) / 0.1
    optimizer.zero_grad()
    loss = F.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    start = 4 * step
    queue[:, start:start + 4] = keys.t().detach()  # PRIMARY
