# message: Some elements marked as dirty during the forward method were not returned as output. The
#   inputs that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 26
# trigger: a memory-saving in-place swish Function in another file marks its input dirty, then makes it
#   contiguous before writing (x = x.contiguous()); the model runs in channels_last memory format, so the
#   convolution's output is not contiguous and the Function writes into, and returns, a copy
# source: none found; the pattern as users write it (a .contiguous() added for a custom kernel, the
#   model later converted to channels_last)
# helpers: lib_inplace_swish26.py
# results: model, outputs
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_inplace_swish26 import inplace_swish  # noqa: E402


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Linear(4, 2)

    def forward(self, images):
        features = inplace_swish(self.conv(images))
        return self.head(features.mean(dim=(2, 3)))


torch.manual_seed(0)
model = ConvBlock().to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
outputs = []
for _ in range(2):
    images = torch.randn(2, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    prediction = model(images)
    loss = prediction.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    outputs.append(prediction.detach())
