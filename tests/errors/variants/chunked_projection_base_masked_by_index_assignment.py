# message: Output 1 of Split is a view and its base or another view of its base has been
#   modified inplace. This view is the output of a function that returns multiple views. Such
#   functions do not allow the output views to be modified inplace. You should replace the inplace
#   operation by an out-of-place one.
# code: AD138 (catalogue: split_base_modified)
# set: 12
# trigger: a gated layer splits its projection into value and gate with chunk(2), then zeroes the
#   negative entries of the whole projection by boolean index assignment (h[h < 0] = 0) before the
#   pieces are used
# source: none found; the pattern as users write it (masking by index assignment after chunk)
# results: losses, model
import torch
from torch import nn


class GatedLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.projection = nn.Linear(3, 4)

    def forward(self, x):
        h = self.projection(x)
        value, gate = h.chunk(2, dim=1)
        h[h < 0] = 0  # PRIMARY
        return value * torch.sigmoid(gate)


torch.manual_seed(0)
model = GatedLayer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
