"""Activation checkpointing of the first block of a network with the reentrant implementation:
the block's input (the data) does not require grad, so the checkpoint's output does not either,
and the block's parameters get no gradient while the head still trains (only a warning).
Source: https://github.com/pytorch/pytorch/issues/7617 ("checkpoint(function, *args) should have
the same requires_grad as function(*args)"; the non-reentrant checkpoint, `use_reentrant=False`,
is the implementation that records the block's parameters whatever the inputs).
expect: silent"""
import warnings

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

warnings.simplefilter("ignore")
torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
head = nn.Linear(16, 1)
optimizer = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.05)
x, y = torch.randn(12, 4), torch.randn(12, 1)

losses = []
for _ in range(3):
    features = checkpoint(block, x, use_reentrant=False)
    loss = (head(features) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in [*block.parameters(), *head.parameters()]]}
