# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [8, 1]], which is output 0 of AsStrided, is at version 2; expected
#   version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 24
# trigger: sharpness-aware minimization with a SAM optimizer wrapper in a library module: the loop
#   calls loss.backward(retain_graph=True), sam.first_step() (which moves every weight in place to the
#   perturbed point, under no_grad), then backward() of the SAME loss instead of a second forward at
#   the perturbed weights; the first forward's Linear saved the weights first_step moved
# source: none found; the pattern as users write it (SAM's two-pass loop, README of davda54/sam)
# helpers: lib_sam24.py
# results: model[0].weight, model[2].weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_sam24 import SAM  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
inputs = torch.randn(16, 3)
targets = inputs.sum(1, keepdim=True)
criterion = nn.MSELoss()
losses = []
for step in range(3):
    loss = criterion(model(inputs), targets)
    loss.backward(retain_graph=True)
    optimizer.first_step()
    loss.backward()  # PRIMARY
    optimizer.second_step()
    losses.append(loss.detach())
