# message: Output 1 of Split is a view and is being modified inplace. This view is the output
#   of a function that returns multiple views. Such functions do not allow the output views to be
#   modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 11
# helpers: lib_rotary.py
# trigger: a rotary position embedding in another file splits the query with torch.chunk (the
#   function) into two halves and rotates the second half in place with a chained
#   second.mul_(cos).add_(first * sin); the query module's forward calls it
# source: none found; the pattern as users write it (rotary embeddings written to save a copy)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_rotary import rotate  # noqa: E402


class RotaryQuery(nn.Module):
    def __init__(self, dim, length):
        super().__init__()
        self.project = nn.Linear(dim, dim)
        positions = torch.arange(length, dtype=torch.float32)[:, None]
        self.register_buffer("angle", positions * torch.linspace(0.1, 1.0, dim // 2))

    def forward(self, x):
        return rotate(self.project(x), self.angle)


torch.manual_seed(0)
model = RotaryQuery(4, 5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, target = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
