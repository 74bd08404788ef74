# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a
#   single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 11
# helpers: lib_transitions.py
# trigger: a sequence model's helper in another file multiplies each step's probability by the
#   previous step's with products[1:].mul_(products[:-1]) on a clone, as one writes it in NumPy (the
#   two slices share all but one element)
# source: none found; the pattern as users write it (NumPy's overlapping in-place idiom carried over)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_transitions import consecutive_products  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
steps, target = torch.randn(5, 3), torch.tensor([0.9, 0.7, 0.6, 0.4, 0.3])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    joint = consecutive_products(torch.sigmoid(model(steps)).squeeze(1))
    loss = (joint - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
