# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# set: 28
# trigger: a sparse linear model is trained with a proximal-gradient optimizer, a torch.optim.Optimizer
#   subclass in another file whose step() (decorated with @torch.no_grad(), as torch's own optimizers)
#   soft-thresholds every parameter with Tensor.apply_ and a Python function after the gradient step
# source: none found; the pattern as users write it (L1 proximal step element by element)
# helpers: lib_proximal28.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_proximal28 import ProximalSGD  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(6, 1)
optimizer = ProximalSGD(model.parameters(), lr=0.1, l1=0.5)
inputs = torch.randn(16, 6)
targets = inputs[:, :2].sum(1, keepdim=True)
losses = []
for _ in range(4):
    optimizer.zero_grad()
    loss = (model(inputs) - targets).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
