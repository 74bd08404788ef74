import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Linear(6, 5)
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-2)
inputs = torch.randn(12, 6)
losses = []
for _ in range(2):
    weights = F.relu(encoder(inputs))
    probs = weights / (weights.sum(1, keepdim=True) + 1e-6)
    log_probs = torch.log(torch.where(probs == 0, torch.ones_like(probs), probs))
    entropy = -(probs * log_probs.masked_fill(probs == 0, 0.0)).sum(1).mean()
    loss = -entropy + probs.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
# NaN compared as a number (NaN != NaN): 7.0 stands for it
result = [t.nan_to_num(7.0) for t in [*losses, *[p.detach().clone() for p in encoder.parameters()]]]
