# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 30
# trigger: a helper in another file registers a tensor hook on each parameter that adds an L2 term to the
#   gradient, grad + weight_decay * parameter; the recommender's item embedding was built with
#   sparse=True, so its hook receives a sparse gradient during backward
# source: none found; the pattern as users write it (weight decay as a gradient hook, applied to every
#   parameter of a model with a sparse embedding)
# helpers: lib_regularise30.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_regularise30 import add_l2_gradient_hook  # noqa: E402


class Recommender(nn.Module):
    def __init__(self, items=10, dim=4):
        super().__init__()
        self.items = nn.Embedding(items, dim, sparse=True)
        self.score = nn.Linear(dim, 1)

    def forward(self, item_ids):
        return self.score(self.items(item_ids)).squeeze(-1)


torch.manual_seed(0)
model = Recommender()
for parameter in model.parameters():
    add_l2_gradient_hook(parameter, 1e-2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    ids, clicks = torch.randint(0, 10, (6,)), torch.randint(0, 2, (6,)).float()
    optimizer.zero_grad()
    loss = nn.functional.binary_cross_entropy_with_logits(model(ids), clicks)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
