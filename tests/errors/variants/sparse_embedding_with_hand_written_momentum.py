# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 7
# trigger: a recommender's embedding uses sparse=True; a hand-written momentum optimizer in another
#   file (lib_sparse_momentum.py) adds the sparse gradient to its dense velocity, gradient first
# source: none found; the pattern as users write it
# helpers: lib_sparse_momentum.py
# results: losses, model.items.weight
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sparse_momentum import HeavyBall  # noqa: E402


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = nn.Embedding(6, 3, sparse=True)

    def forward(self, users, items):
        return (users * self.items(items)).sum(1)


torch.manual_seed(0)
model = Recommender()
optimizer = HeavyBall(model.parameters(), lr=0.1, momentum=0.9)
users, items, ratings = torch.randn(4, 3), torch.tensor([0, 2, 2, 5]), torch.randn(4)
losses = []
for _ in range(2):
    model.zero_grad()
    loss = F.mse_loss(model(users, items), ratings)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
