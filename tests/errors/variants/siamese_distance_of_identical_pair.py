# message: Function 'SqrtBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 4
# trigger: a siamese network trained with a contrastive loss under anomaly detection; the
#   distance is written in a helper in another file (lib_distances.py) and one pair is an
#   anchor compared with itself (distance 0)
# source: none found; the pattern as users write it
# helpers: lib_distances.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_distances import euclidean  # noqa: E402


def contrastive_loss(first, second, same, margin=1.0):
    distance = euclidean(first, second)
    return (same * distance.pow(2) + (1 - same) * torch.relu(margin - distance).pow(2)).mean()


torch.manual_seed(0)
torch.autograd.set_detect_anomaly(True)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
anchors = torch.randn(4, 4)
others = torch.cat([anchors[:1], torch.randn(3, 4)])
same = torch.tensor([1.0, 0.0, 1.0, 0.0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = contrastive_loss(model(anchors), model(others), same)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
