# message: The function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'.
#   This input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 22
# trigger: a multi-label classifier learns one weight per class (nn.Parameter, softplus) and passes the
#   weights of each target's classes to F.binary_cross_entropy as weight=
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch.nn.functional as F


class WeightedTagger(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)
        self.class_logit = nn.Parameter(torch.zeros(classes))

    def loss(self, x, y):
        p = torch.sigmoid(self.head(x))
        w = F.softplus(self.class_logit).expand_as(p)
        return F.binary_cross_entropy(p, y, weight=w)  # PRIMARY


torch.manual_seed(0)
model = WeightedTagger(6, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    x = torch.randn(8, 6)
    y = (torch.rand(8, 3) > 0.5).float()
    loss = model.loss(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
