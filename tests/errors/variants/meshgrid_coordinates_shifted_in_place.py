# message: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 9
# trigger: a coordinate-conditioned layer builds its coordinate grids with torch.meshgrid (whose
#   outputs are expanded views) and shifts one grid in place by a learned offset
# source: none found; the pattern as users write it (CoordConv-style coordinate channels)
# results: losses, layer
import torch
from torch import nn
import torch.nn.functional as F


class CoordinateFeatures(nn.Module):
    def __init__(self, height, width):
        super().__init__()
        self.height, self.width = height, width
        self.offset = nn.Parameter(torch.zeros(1))
        self.mix = nn.Linear(2, 1)

    def forward(self):
        rows, columns = torch.meshgrid(torch.linspace(-1, 1, self.height), torch.linspace(-1, 1, self.width),
                                       indexing="ij")
        rows += self.offset  # PRIMARY
        return self.mix(torch.stack([rows, columns], -1)).squeeze(-1)


torch.manual_seed(0)
layer = CoordinateFeatures(3, 4)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
target = torch.randn(3, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(layer(), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
