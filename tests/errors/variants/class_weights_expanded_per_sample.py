# message: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 4
# trigger: a loss helper in another file (lib_weighting.py) expands the class weights to the
#   batch and masks them in place with the one-hot labels
# source: none found; the pattern as users write it
# helpers: lib_weighting.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_weighting import sample_weights  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
class_weight = torch.tensor([1.0, 2.0, 0.5])
x, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 2, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    per_sample = F.cross_entropy(model(x), labels, reduction="none")
    loss = (sample_weights(class_weight, labels) * per_sample).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
