# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a
#   single memory location.
# code: AD203 (catalogue: overlap_inplace)
# set: 18
# trigger: a smoothing layer in another file (lib_exponential_filter.py) filters a sequence in place with
#   out[1:].addcmul_(out[:-1], self.decay): each step adds the previous step's input times a learned decay,
#   the two slices overlapping
# source: none found; the pattern as users write it (a one-line two-tap filter)
# helpers: lib_exponential_filter.py
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_exponential_filter import Smoother  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 2), Smoother(2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(5, 2)).pow(2).mean()
    loss.backward()
    optimizer.step()
