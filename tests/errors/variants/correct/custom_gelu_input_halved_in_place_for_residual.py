# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [4, 16]], which is output 0 of AddmmBackward0, is at version 1; expected
#   version 0 instead.
# code: AD101 (catalogue: saved_tensor_modified)
# set: 22
# helpers: lib_tanh_gelu_fn.py
# trigger: an MLP block applies a tanh-GELU written as a custom autograd.Function (setup_context, saves its
#   input) in a library module, then halves the pre-activation in place (h.mul_(0.5)) to reuse it as
#   a residual
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_tanh_gelu_fn import TanhGelu


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = nn.Linear(dim, 16)
        self.down = nn.Linear(16, dim)

    def forward(self, x):
        h = self.up(x)
        act = TanhGelu.apply(h)
        h = h * 0.5  # PRIMARY
        return x + self.down(act + h)


torch.manual_seed(0)
model = GatedBlock(8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
