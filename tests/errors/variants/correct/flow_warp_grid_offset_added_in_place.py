# message: unsupported operation: more than one element of the written-to tensor refers to a single
#   memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 16
# trigger: an optical-flow warping module builds the identity sampling grid once and expands it to
#   the batch (base.expand(B, -1, -1, -1)), then adds the predicted flow to it in place before
#   F.grid_sample
# source: none found; the pattern as users write it (flow warping with a cached identity grid)
# results: model, warped
import torch
from torch import nn
from torch.nn import functional as F


class FlowWarp(nn.Module):
    def __init__(self, height, width):
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, height), torch.linspace(-1, 1, width), indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys], -1).unsqueeze(0))
        self.flow_head = nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, image):
        flow = 0.1 * torch.tanh(self.flow_head(image)).permute(0, 2, 3, 1)
        grid = self.base + flow  # PRIMARY
        return F.grid_sample(image, grid, align_corners=True)


torch.manual_seed(0)
model = FlowWarp(5, 6)
warped = model(torch.randn(2, 3, 5, 6))
warped.pow(2).mean().backward()
