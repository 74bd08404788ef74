"""Per-feature ratio features x / n where some counts n are zero: the 0/0 entries are replaced by
zeros with `torch.where`, so the forward values are finite, but the backward of the division still
runs for the masked entries and multiplies their zero gradient by inf, giving NaN gradients; the
optimizer step then turns the weights into NaN (no error).
Source: https://github.com/pytorch/pytorch/issues/16317 ("NaN gradients even after removing 0/0
value using torch.where"; the reporter's working version divides by
`torch.where(n == 0, torch.ones_like(n), n)` first; maintainers: autograd does not distinguish "no
gradient" from "zero gradient").
expect: silent"""
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
    ratio = totals / counts
    ratio = torch.where(counts == 0, torch.zeros_like(ratio), ratio)
    loss = ((head(ratio) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in encoder.parameters()]}
