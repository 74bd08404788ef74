# message: unsupported operation: some elements of the input tensor and the written-to tensor
#   refer to a single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 7
# trigger: a feature helper in another file (lib_signal.py) adds each time step's previous value
#   in place, series[1:].add_(series[:-1], alpha=decay): the two slices share all but one element
# source: none found; the pattern as users write it
# helpers: lib_signal.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_signal import smooth_history  # noqa: E402


class SeriesRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(6, 1)

    def forward(self, series):
        return self.head(series.T)


torch.manual_seed(0)
model = SeriesRegressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(2):
    series = torch.randn(6, 4)
    target = torch.randn(4, 1)
    features = smooth_history(series, 0.5)
    optimizer.zero_grad()
    loss = F.mse_loss(model(features), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
