# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 21
# trigger: a spatial-transformer block warps its conv features with F.affine_grid/F.grid_sample and
#   then scales the same features in place (feat.mul_(skip_scale)) for its skip connection;
#   grid_sample saved them for backward
# source: none found; the pattern as users write it (spatial transformer with a residual path)
# results: model, losses
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class WarpBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.theta = nn.Parameter(torch.tensor([[1.0, 0.1, 0.0], [0.0, 0.9, 0.05]]))
        self.skip_scale = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        feat = self.conv(x)
        grid = F.affine_grid(self.theta.expand(x.shape[0], 2, 3), list(feat.shape), align_corners=False)
        warped = F.grid_sample(feat, grid, align_corners=False)
        feat = feat * self.skip_scale  # PRIMARY
        return warped + feat


torch.manual_seed(0)
model = WarpBlock(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    x = torch.randn(2, 3, 6, 6)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
