"""SCNN's spatial message passing (lane detection) propagates information
row by row and column by column by adding a convolution of the previous
slice into the next one, in place: `output[:, :, i:i + 1, :].add_(F.relu(
self.conv_d(output[:, :, i - 1:i, :])))`.  `output` is the backbone's
ReLU output (kept by that ReLU for backward), and each convolution keeps the
slice it read; every `add_` bumps the shared version counter, so training
fails at `loss.backward()` ("output 0 of ReluBackward0, is at version 20;
expected version 0").  The fix builds a list of slices and concatenates.
Buggy line: `output[:, :, i:i + 1, :].add_(...)` in `SpatialConv.forward`.
Expected finding: ADL001 there.
Source: https://github.com/voldemortX/pytorch-auto-drive/issues/121"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class SpatialConv(nn.Module):
    def __init__(self, num_channels=8):
        super().__init__()
        self.conv_d = nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4))
        self.conv_u = nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4))
        self._adjust_initializations(num_channels=num_channels)

    def _adjust_initializations(self, num_channels=128):
        bound = math.sqrt(2.0 / (num_channels * 9 * 5))
        nn.init.uniform_(self.conv_d.weight, -bound, bound)
        nn.init.uniform_(self.conv_u.weight, -bound, bound)

    def forward(self, input):
        output = input
        # Down
        for i in range(1, output.shape[2]):
            output[:, :, i:i + 1, :].add_(F.relu(self.conv_d(output[:, :, i - 1:i, :])))  # expect: ADL001
        # Up
        for i in range(output.shape[2] - 2, 0, -1):
            output[:, :, i:i + 1, :].add_(F.relu(self.conv_u(output[:, :, i + 1:i + 2, :])))  # expect: ADL001
        return output


class SCNNNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.spatial_conv = SpatialConv(num_channels=8)
        self.decoder = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        x = self.backbone(x)
        x = self.spatial_conv(x)  # expect: ADL001
        return self.decoder(x)


def run():
    torch.manual_seed(0)
    net = SCNNNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    images = torch.randn(2, 3, 6, 10)
    labels = torch.randint(0, 3, (2, 6, 10))
    loss = F.cross_entropy(net(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
