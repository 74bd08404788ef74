# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# helpers: lib_rms_function.py
# set: 20
# trigger: a pre-norm block normalises its hidden state with a custom RMSNorm Function from another file
#   (ctx.save_for_backward of its input), then adds the sub-layer's output to the same hidden state in
#   place (h += self.mlp(normed)) to save memory; the Function's saved input is modified
# source: none found; the pattern as users write it (in-place residual adds after a fused norm)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_rms_function import rms_norm  # noqa: E402


class PreNormBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, h):
        normed = rms_norm(h)
        h += self.mlp(normed)  # PRIMARY
        return h


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.embed = nn.Linear(3, dim)
        self.blocks = nn.ModuleList([PreNormBlock(dim) for _ in range(2)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


torch.manual_seed(0)
model = Model(8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
