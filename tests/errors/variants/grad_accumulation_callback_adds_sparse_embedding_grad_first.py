# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 27
# trigger: a recommender trains a bag-of-items model whose nn.Embedding has sparse=True; a
#   gradient-accumulation callback in another file keeps a dense running sum per parameter over four
#   micro-batches and writes it as p.grad + sums[name], the sparse gradient first
# source: none found; the pattern as users write it (accumulation kept outside .grad, for a model with
#   sparse embeddings)
# helpers: lib_grad_sum27.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_sum27 import GradientSum  # noqa: E402


class BagOfItems(nn.Module):
    def __init__(self, items=20, width=4):
        super().__init__()
        self.items = nn.Embedding(items, width, sparse=True)
        self.score = nn.Linear(width, 1)

    def forward(self, history):
        return self.score(self.items(history).mean(1))


torch.manual_seed(0)
model = BagOfItems()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accumulation = GradientSum(model)
losses = []
for step in range(2):
    for _ in range(4):
        history, clicked = torch.randint(0, 20, (6, 3)), torch.rand(6, 1)
        loss = nn.functional.binary_cross_entropy_with_logits(model(history), clicked)
        loss.backward()
        accumulation.on_after_backward(model)
        losses.append(loss.item())
    accumulation.on_before_step(model)
    optimizer.step()
