# message: Trying to backward through the graph a second time (or directly access saved tensors after
#   they have already been freed).
# code: AD302 (catalogue: backward_twice)
# set: 19
# trigger: a prototype classifier keeps class prototypes as an exponential moving average of the batch
#   features, updated in forward (self.prototypes = m * self.prototypes + (1 - m) * feats.mean(0))
#   without detach (the prototypes are meant as running constants, as in a memory bank), so the
#   next batch's loss reaches the previous batch's graph
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class PrototypeClassifier(nn.Module):
    def __init__(self, dim, classes, momentum=0.9):
        super().__init__()
        self.encoder = nn.Linear(3, dim)
        self.momentum = momentum
        self.prototypes = torch.zeros(classes, dim)

    def forward(self, x, y):
        feats = self.encoder(x)
        means = torch.stack([feats[y == c].mean(0) for c in range(self.prototypes.shape[0])])
        self.prototypes = self.momentum * self.prototypes + (1 - self.momentum) * means  # PRIMARY
        return -torch.cdist(feats, self.prototypes)


torch.manual_seed(0)
model = PrototypeClassifier(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
y = torch.tensor([0, 1, 0, 1])
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(torch.randn(4, 3), y), y)
    loss.backward()
    optimizer.step()
