# message: The function 'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'weight'.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 18
# trigger: example re-weighting in the style of Meta-Weight-Net: a small weighting network maps each
#   example's detached loss to a weight, passed as the weight= of
#   F.binary_cross_entropy_with_logits; both networks are trained by the same optimizer
# source: none found; the pattern as users write it (learned example weights for noisy labels)
# results: classifier, weigher
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class ReweightedLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.weigher = nn.Sequential(nn.Linear(1, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid())

    def forward(self, logits, targets):
        raw = F.binary_cross_entropy_with_logits(logits, targets, reduction="none").detach()
        weights = self.weigher(raw.unsqueeze(-1)).squeeze(-1)
        return (F.binary_cross_entropy_with_logits(logits, targets, reduction="none") * weights).mean()  # PRIMARY


torch.manual_seed(0)
classifier = nn.Linear(3, 1)
criterion = ReweightedLoss()
weigher = criterion.weigher
optimizer = torch.optim.SGD(list(classifier.parameters()) + list(weigher.parameters()), lr=0.1)
for _ in range(2):
    x, y = torch.randn(6, 3), torch.randint(0, 2, (6, 1)).float()
    optimizer.zero_grad()
    loss = criterion(classifier(x), y)
    loss.backward()
    optimizer.step()
