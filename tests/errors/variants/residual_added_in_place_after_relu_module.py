# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 5]], which is output 0 of ReluBackward0, is at version 1;
#   expected version 0 instead.
# code: AD101 (catalogue: saved_tensor_modified)
# set: 5
# trigger: a residual block in another file (lib_blocks.py) adds the identity with += to the
#   output of an nn.ReLU() module (not inplace), which ReLU saved for its backward; a model stacks
#   two blocks and a Trainer-like loop trains it
# source: none found; the pattern as users write it (ResNet blocks written with out += identity)
# helpers: lib_blocks.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_blocks import ResidualBlock  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(ResidualBlock(5), ResidualBlock(5), nn.Linear(5, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(4, 5), torch.randn(4, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
