# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 11
# helpers: lib_ranking.py
# trigger: the training loop collects each batch's scores (still in the graph) in a list; at the end
#   of the epoch a helper in another file joins them with np.concatenate, which converts every
#   tensor through __array__, to pick a threshold for the next epoch's hard examples
# source: none found; the pattern as users write it (epoch-level statistics with NumPy over tensors
#   kept from training)
# results: thresholds, losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_ranking import top_fraction_threshold  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4)) for _ in range(2)]
thresholds, losses = [], []
for epoch in range(2):
    epoch_scores = []
    for x, y in batches:
        optimizer.zero_grad()
        scores = model(x).squeeze(1)
        loss = (scores - y).pow(2).mean()
        loss.backward()
        optimizer.step()
        epoch_scores.append(scores)
        losses.append(loss.item())
    thresholds.append(top_fraction_threshold(epoch_scores, 0.25))
