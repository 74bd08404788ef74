"""Photorealistic style transfer (an HRNet-like generator trained through
VGG features): each `BasicBlock` runs its input through an `identity_block`
`nn.Sequential` that ends in `nn.ReLU()`, then adds the residual in place,
`out += residual`.  The ReLU keeps its output for backward, so
`total_loss.backward()` fails ("one of the variables needed for gradient
computation has been modified by an inplace operation"); the fix writes
`out = out + residual`.
Buggy line: `out += residual` in `BasicBlock.forward`.
Expected finding: ADL001 there.
Source: https://github.com/jarek-pawlowski/microbial-dataset-generation/pull/1"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

IN_MOMENTUM = 0.15


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        conv_padding = int(np.floor(kernel_size / 2))
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=conv_padding)

    def forward(self, x):
        return self.conv(x)


class BasicBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(BasicBlock, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.relu = nn.ReLU(inplace=True)
        self.identity_block = nn.Sequential(
            ConvLayer(in_channels, out_channels // 4, kernel_size=1, stride=1),
            nn.InstanceNorm2d(out_channels // 4, momentum=IN_MOMENTUM),
            nn.ReLU(),
            ConvLayer(out_channels // 4, out_channels, kernel_size=1, stride=1),
            nn.InstanceNorm2d(out_channels, momentum=IN_MOMENTUM),
            nn.ReLU(),
        )
        self.shortcut = nn.Sequential(
            ConvLayer(in_channels, out_channels, 1, stride),
            nn.InstanceNorm2d(out_channels),
        )

    def forward(self, x):
        out = self.identity_block(x)
        if self.in_channels == self.out_channels:
            residual = x
        else:
            residual = self.shortcut(x)
        out += residual  # expect: ADL001
        out = self.relu(out)  # expect: ADL001 (the in-place ReLU writes the same saved tensor again)
        return out


class HRNet(nn.Module):
    def __init__(self):
        super(HRNet, self).__init__()
        self.pass1_1 = BasicBlock(3, 16, kernel_size=3, stride=1)
        self.pass1_2 = BasicBlock(16, 16, kernel_size=3, stride=1)
        self.pass1_8 = nn.Conv2d(16, 3, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        out = self.pass1_1(x)
        out = self.pass1_2(out)
        return self.pass1_8(out)


def get_grim_matrix(tensor):
    b, c, h, w = tensor.size()
    tensor = tensor.view(b * c, h * w)
    return torch.mm(tensor, tensor.t())


def style_transfer(content_image, style_image, steps=1):
    vgg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
    for parameter in vgg.parameters():
        parameter.requires_grad_(False)
    style_net = HRNet()
    style_gram = get_grim_matrix(vgg(style_image))
    content_features = vgg(content_image)
    optimizer = optim.Adam(style_net.parameters(), lr=5e-3)
    for epoch in range(steps):
        target = style_net(content_image)
        target_features = vgg(target)
        content_loss = torch.mean((target_features - content_features) ** 2)
        style_loss = torch.mean((get_grim_matrix(target_features) - style_gram) ** 2)
        total_loss = 150 * content_loss + 0.5 * style_loss
        optimizer.zero_grad()
        total_loss.backward()  # no finding: the false alarm of the first run (ADL019: the VGG is frozen, `style_gram` has no graph) is gone
        optimizer.step()
    return style_net


def run():
    torch.manual_seed(0)
    style_transfer(torch.randn(1, 3, 8, 8), torch.randn(1, 3, 8, 8))
