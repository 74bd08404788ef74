# message: Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 29
# trigger: a model keeps its hidden activations in float16 to save memory and normalises them with an
#   in-place RMS normalisation Function from another file, which divides x in place, marks it dirty and
#   returns x.float() so that the float32 layer after it can read it: for a float16 x that is a new
#   tensor, not x
# source: none found; the pattern as users write it (memory-saving in-place norms in mixed precision)
# helpers: lib_rmsnorm29.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_rmsnorm29 import InplaceRmsNorm  # noqa: E402


class HalfHiddenRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        hidden = self.proj(x).half()
        return self.out(InplaceRmsNorm.apply(hidden))


torch.manual_seed(0)
model = HalfHiddenRegressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
