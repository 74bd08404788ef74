# message: Output 0 of Unbind is a view and is being modified inplace.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 18
# trigger: a gated block splits its projection into value and gate with
#   unflatten(-1, (2, channels)).unbind(-2) (several views of one result) and multiplies the value
#   in place by the gate's sigmoid
# source: none found; the pattern as users write it (a GLU written by hand to save memory)
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class GatedBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        self.proj = nn.Linear(channels, 2 * channels)

    def forward(self, x):
        value, gate = self.proj(x).unflatten(-1, (2, self.channels)).unbind(-2)
        value = value.mul(torch.sigmoid(gate))  # PRIMARY
        return value


torch.manual_seed(0)
model = nn.Sequential(GatedBlock(4), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(3, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
