# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled.
#   Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code
#   by moving both the view and the inplace either both inside the no_grad block (if you don't want
#   the inplace to be tracked) or both outside (if you want the inplace to be tracked).
# code: AD105 (catalogue: view_nograd_inplace)
# set: 12
# helpers: lib_layout.py
# trigger: a layout helper in another file, decorated with @torch.no_grad() because it "only moves
#   axes", returns feats.permute(0, 2, 1) (a view); the model's forward adds its learned bias to it
#   in place
# source: none found; the pattern as users write it (layout helpers marked no_grad)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_layout import channels_last  # noqa: E402


class Conv1dHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 1)
        self.bias = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        h = channels_last(self.conv(x))
        h += self.bias  # PRIMARY
        return h.mean(dim=1)


torch.manual_seed(0)
model = Conv1dHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 2, 5), torch.randn(4, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
