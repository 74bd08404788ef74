# message: Output 1 of Split is a view and its base or another view of its base has been modified
#   inplace. This view is the output of a function that returns multiple views. Such functions do
#   not allow the output views to be modified inplace. You should replace the inplace operation by
#   an out-of-place one.
# code: AD138 (catalogue: split_base_modified)
# set: 11
# trigger: a gated unit's forward splits its projection into value and gate with chunk(2), then
#   regularises the whole projection with F.dropout(h, p, self.training, inplace=True) (positional
#   training flag) before it combines the pieces
# source: none found; the pattern as users write it (dropout applied in place to save memory)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class GatedUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Linear(3, 8)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.project(x)
        value, gate = h.chunk(2, dim=-1)
        F.dropout(h, 0.25, self.training, inplace=True)  # PRIMARY
        return self.head(value * torch.sigmoid(gate))


torch.manual_seed(0)
model = GatedUnit()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
