# message: not enough values to unpack (expected 3, got 2)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 31
# trigger: a factorisation-machine recommender's pairwise interaction is a hand-written Function
#   (another file) over any number of fields (forward(ctx, *fields), save_for_backward(*fields)),
#   whose backward unpacks three fields by name; this model has two (user and item)
# source: none found; the pattern as users write it (a varargs Function written for the first model)
# helpers: lib_factorisation31.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_factorisation31 import PairwiseInteraction  # noqa: E402


class FactorisationMachine(nn.Module):
    def __init__(self, users=5, items=6, factors=3):
        super().__init__()
        self.user = nn.Embedding(users, factors)
        self.item = nn.Embedding(items, factors)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, users, items):
        return self.bias + PairwiseInteraction.apply(self.user(users), self.item(items))


torch.manual_seed(0)
model = FactorisationMachine()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
users, items = torch.tensor([0, 1, 2, 3, 4, 1]), torch.tensor([5, 4, 3, 2, 1, 0])
clicks = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = nn.functional.binary_cross_entropy_with_logits(model(users, items), clicks)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
