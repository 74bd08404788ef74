"""Per-feature ratio features x / n where some counts n are zero: the 0/0 entries are replaced by
zeros with `torch.where`, but the backward of the division still gives NaN for them.
Source: https://github.com/pytorch/pytorch/issues/16317 (divide by a denominator with the zeros
replaced by ones first)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
counts = torch.tensor([[0.0, 2.0, 3.0, 0.0], [1.0, 0.0, 4.0, 2.0]]).repeat(4, 1)
target = torch.randn(8, 1)
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
inputs = torch.rand(8, 4)
losses = []
for step in range(3):
    totals = encoder(inputs)
    ratio = totals / torch.where(counts == 0, torch.ones_like(counts), counts)
    ratio = torch.where(counts == 0, torch.zeros_like(ratio), ratio)
    loss = ((head(ratio) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in encoder.parameters()]}
