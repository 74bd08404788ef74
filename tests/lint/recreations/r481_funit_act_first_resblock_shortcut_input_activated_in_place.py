"""FUNIT's blocks: `ActFirstResBlock` computes a learned 1x1 shortcut of its
input, `x_s = self.conv_s(x)`, then the residual branch `self.conv_0(x)`,
a `Conv2dBlock` built with `activation_first=True` whose activation is
`nn.LeakyReLU(0.2, inplace=True)`.  The activation overwrites `x`, which the
shortcut convolution saved for its weight's gradient, and the generator's
backward raises "one of the variables needed for gradient computation has
been modified by an inplace operation".  The fix is `inplace=False` for the
activations in blocks.py (or activating a copy).
Buggy line: `x = self.activation(x)` in `Conv2dBlock.forward` (activation first).
Source: https://github.com/NVlabs/FUNIT/issues/23"""
import torch
import torch.nn as nn


class Conv2dBlock(nn.Module):
    def __init__(self, in_dim, out_dim, ks, st, padding=0, activation="relu", activation_first=False):
        super().__init__()
        self.activation_first = activation_first
        self.pad = nn.ReflectionPad2d(padding)
        self.conv = nn.Conv2d(in_dim, out_dim, ks, st, bias=True)
        if activation == "lrelu":
            self.activation = nn.LeakyReLU(0.2, inplace=True)
        elif activation == "relu":
            self.activation = nn.ReLU(inplace=True)
        else:
            self.activation = None

    def forward(self, x):
        if self.activation_first:
            if self.activation:
                x = self.activation(x)
            x = self.conv(self.pad(x))
        else:
            x = self.conv(self.pad(x))
            if self.activation:
                x = self.activation(x)
        return x


class ActFirstResBlock(nn.Module):
    def __init__(self, fin, fout, activation="lrelu"):
        super().__init__()
        self.learned_shortcut = fin != fout
        fhid = min(fin, fout)
        self.conv_0 = Conv2dBlock(fin, fhid, 3, 1, padding=1, activation=activation, activation_first=True)
        self.conv_1 = Conv2dBlock(fhid, fout, 3, 1, padding=1, activation=activation, activation_first=True)
        if self.learned_shortcut:
            self.conv_s = nn.Conv2d(fin, fout, 1, 1, bias=False)

    def forward(self, x):
        x_s = self.conv_s(x) if self.learned_shortcut else x
        dx = self.conv_0(x)  # expect: ADL001
        dx = self.conv_1(dx)
        return x_s + dx


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, 1, 1)
        self.blocks = nn.Sequential(ActFirstResBlock(4, 8), ActFirstResBlock(8, 8))
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return self.out(self.blocks(self.stem(x)))


def run():
    torch.manual_seed(0)
    dis = Discriminator()
    images = torch.randn(2, 3, 6, 6)
    loss = dis(images).mean()
    loss.backward()
