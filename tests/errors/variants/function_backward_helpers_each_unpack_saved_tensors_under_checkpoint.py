# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once.
#   If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please open
#   an issue with details on your use case.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 27
# trigger: a hand-written linear Function (another file) computes its two gradients in two staticmethod
#   helpers, _grad_input(ctx, g) and _grad_weight(ctx, g), each reading ctx.saved_tensors; the blocks
#   that use it run under torch.utils.checkpoint(use_reentrant=False) in the model's forward, so the
#   second read unpacks the recomputed tensors again
# source: none found; the pattern as users write it (backward split into helpers that take ctx)
# helpers: lib_linear27.py
# results: losses, model
import os
import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_linear27 import SavedLinear  # noqa: E402


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(width, width) / width ** 0.5)

    def forward(self, x):
        return x + torch.tanh(SavedLinear.apply(x, self.weight))


class CheckpointedStack(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x)


torch.manual_seed(0)
model = CheckpointedStack()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    x, y = torch.randn(5, 6), torch.randn(5, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
