# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a
#   single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 22
# helpers: lib_kfac_factors.py
# trigger: a K-FAC-style preconditioner in a library module builds the input covariance from the layer's
#   activations and symmetrises it in place with cov.add_(cov.t()) before the damped solve that
#   preconditions the gradient
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_kfac_factors import precondition


torch.manual_seed(0)
model = nn.Linear(4, 2, bias=False)
losses = []
for step in range(3):
    x = torch.randn(16, 4)
    loss = (model(x) - x[:, :2]).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        model.weight -= 0.1 * precondition(model.weight.grad, x)
    losses.append(loss.detach())
