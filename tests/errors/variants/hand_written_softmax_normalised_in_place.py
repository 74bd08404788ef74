# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 8
# helpers: lib_activations.py
# trigger: an attention module's forward calls a hand-written softmax from another file, which
#   normalises the exponentials in place (e /= e.sum(...)); exp saved its output for backward
# source: none found; the pattern as users write it (a hand-written softmax, normalised in place to
#   save memory)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_activations import stable_softmax  # noqa: E402


class TinyAttention(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)

    def forward(self, x):
        scores = self.query(x) @ self.key(x).transpose(-2, -1) / x.shape[-1] ** 0.5
        return stable_softmax(scores) @ x


torch.manual_seed(0)
model = TinyAttention(4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
