# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 27
# trigger: a foreground-segmentation training loop calls a loss helper in another file that makes the
#   one-channel logits [N, 1, H, W] match the label map [N, H, W] with logits.resize_as_(mask) (the
#   resize_as_ spelling, taken for "give it the shape of")
# source: none found; the pattern as users write it (resize_as_ used as reshape_as)
# helpers: lib_seg_loss27.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_seg_loss27 import mask_loss  # noqa: E402


class TinySegmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Conv2d(4, 1, 1)

    def forward(self, images):
        return self.head(torch.relu(self.features(images)))


torch.manual_seed(0)
model = TinySegmenter()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(3):
    images = torch.randn(2, 3, 6, 6)
    mask = (images.mean(1) > 0).float()
    loss = mask_loss(model(images), mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
