# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled.
# code: AD105 (catalogue: view_nograd_inplace)
# set: 3
# trigger: a helper in another file (lib_patches.py), decorated with @torch.no_grad() because it
#   "only reshapes", returns a view of the feature map; the caller centres the patches in place
# source: https://github.com/ccarliu/m3ae/issues/15 (a view from a no-grad path written in place)
# helpers: lib_patches.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_patches import as_patches  # noqa: E402


class PatchModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.head = nn.Linear(2, 1)

    def forward(self, x):
        patches = as_patches(self.stem(x), 2)
        patches.sub_(patches.mean(dim=1, keepdim=True))
        return self.head(patches).mean(dim=1)


torch.manual_seed(0)
model = PatchModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 6), torch.randn(4, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
