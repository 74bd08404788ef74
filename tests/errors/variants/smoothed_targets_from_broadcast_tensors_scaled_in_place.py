# message: unsupported operation: more than one element of the written-to tensor refers to a single
#   memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 12
# helpers: lib_smoothing.py
# trigger: a label-smoothing loss in another file matches the targets ([batch, 1]) to the predictions
#   ([batch, classes]) with torch.broadcast_tensors (expanded views, no copy) and smooths them in
#   place with mul_().add_()
# source: none found; the pattern as users write it (broadcast_tensors then in-place arithmetic)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_smoothing import smoothed_bce  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.tensor([[1.0], [0.0], [1.0], [1.0], [0.0]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = smoothed_bce(model(x), y, 0.1)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
