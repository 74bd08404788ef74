# message: A view was created in no_grad mode and its base or another view of its base has been modified
#   inplace with grad mode enabled.
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 19
# trigger: a contrastive loss with hard-negative mining takes the positive scores as a constant
#   threshold with sim.diagonal() under torch.no_grad(), then masks the positives out of the similarity
#   matrix in place (sim.fill_diagonal_) before comparing the negatives with the threshold
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class HardNegativeLoss(nn.Module):
    def __init__(self, margin=0.2):
        super().__init__()
        self.margin = margin

    def forward(self, a, b):
        sim = a @ b.t()
        with torch.no_grad():
            threshold = sim.diagonal().clone()  # PRIMARY
        positives = torch.diagonal(sim).clone()
        sim.fill_diagonal_(-10.0)
        hard = sim > (threshold.unsqueeze(1) - self.margin)
        negatives = (sim * hard).sum(1) / hard.sum(1).clamp(min=1)
        return (negatives - positives + self.margin).clamp(min=0).mean()


torch.manual_seed(0)
model = nn.Linear(3, 4)
criterion = HardNegativeLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    x = torch.randn(5, 3)
    loss = criterion(model(x), model(x + 0.1 * torch.randn(5, 3)))
    loss.backward()
    optimizer.step()
