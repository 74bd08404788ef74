# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 20
# trigger: a multi-label tagger's loss zeroes the probability of the classes each example ignores
#   with probs.scatter_(1, ignored, 0.0) on torch.sigmoid's output (sigmoid saved its output for
#   backward), inside a loss class called from the training loop
# source: none found; the pattern as users write it (ignored classes zeroed after the sigmoid)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class MaskedMultiLabelLoss(nn.Module):
    def forward(self, logits, targets, ignored):
        probs = torch.sigmoid(logits)
        probs.scatter_(1, ignored, 0.0)  # PRIMARY
        targets = targets.scatter(1, ignored, 0.0)
        return ((probs - targets) ** 2).mean()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 5))
criterion = MaskedMultiLabelLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    x = torch.randn(8, 6)
    targets = (torch.rand(8, 5) > 0.5).float()
    ignored = torch.randint(0, 5, (8, 1))
    optimizer.zero_grad()
    loss = criterion(model(x), targets, ignored)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
