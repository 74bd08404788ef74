# message: A view was created in no_grad mode and its base or another view of its base has been modified
#   inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is
#   forbidden. You can clarify your code by moving both the view and the inplace either both inside
#   the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the
#   inplace to be tracked).
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 10
# helpers: lib_activation_log.py
# trigger: a histogram logger in another file, decorated with @torch.no_grad(), returns a flat view
#   of the activations (h.view(-1)); the module's forward keeps it on self and then scales the
#   activations in place by a learned gain; the trainer reads the kept view after the step
# source: none found; the pattern as users write it (activation histograms kept without a copy)
# results: losses, model, spreads
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_activation_log import flat_activations  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 4)
        self.gain = nn.Parameter(torch.ones(()))
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.layer(x)
        self.flat = flat_activations(h)
        h.mul_(self.gain)
        return self.head(h)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses, spreads = [], []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    spreads.append((model.flat.max() - model.flat.min()).item())
