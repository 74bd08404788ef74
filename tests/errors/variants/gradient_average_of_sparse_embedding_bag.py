# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 8
# helpers: lib_grad_stats.py
# trigger: a monitoring helper in another file keeps a moving average of each parameter's gradient
#   (grad * (1 - decay) + average * decay); the model's nn.EmbeddingBag(sparse=True) has a sparse
#   gradient, and a sparse tensor plus a dense one is refused
# source: none found; the pattern as users write it
# results: list(average.values()), model.head, model.bag.weight
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_stats import update_gradient_average  # noqa: E402


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(10, 4, mode="mean", sparse=True)
        self.head = nn.Linear(4, 2)

    def forward(self, tokens, offsets):
        return self.head(self.bag(tokens, offsets))


torch.manual_seed(0)
model = BagClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
average = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
tokens, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
labels = torch.tensor([0, 1])
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens, offsets), labels)
    loss.backward()
    update_gradient_average(average, model)
    optimizer.step()
