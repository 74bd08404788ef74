"""A YOLOv4 re-implementation builds CSPDarknet53's residual blocks from
`Convolutional` layers whose activation is chosen by name,
`activate_name[activate]` (Mish by default, `nn.ReLU` when the config says
`activate='relu'`), and adds the shortcut with `out += residual`.  `out` is
the second convolution's activation output: Mish keeps only its input, so
the default runs, but ReLU keeps its output, and with `activate='relu'`
training fails at `loss.backward()` ("... output 0 of ReluBackward0, is at
version 1").  The fix adds out of place (`out = out + residual`).
Buggy line: `out += residual` in `CSPBlock.forward`.
Expected finding: ADL001 there.
Source: https://github.com/argusswift/YOLOv4-pytorch/issues/247"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


activate_name = {
    "relu": nn.ReLU,
    "leaky": nn.LeakyReLU,
    "mish": Mish,
}


class Convolutional(nn.Module):
    def __init__(self, filters_in, filters_out, kernel_size, stride=1, activate="mish"):
        super().__init__()
        self.conv = nn.Conv2d(filters_in, filters_out, kernel_size, stride, kernel_size // 2, bias=False)
        self.norm = nn.BatchNorm2d(filters_out)
        self.activate = activate_name[activate]()

    def forward(self, x):
        return self.activate(self.norm(self.conv(x)))


class CSPBlock(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels=None, residual_activation="linear", activate="mish"):
        super().__init__()
        if hidden_channels is None:
            hidden_channels = out_channels
        self.block = nn.Sequential(
            Convolutional(in_channels, hidden_channels, 1, activate=activate),
            Convolutional(hidden_channels, out_channels, 3, activate=activate),
        )
        self.activation = activate_name[residual_activation]() if residual_activation != "linear" else nn.Identity()

    def forward(self, x):
        residual = x
        out = self.block(x)
        out += residual  # expect: ADL001
        return self.activation(out)


class CSPStage(nn.Module):
    def __init__(self, channels, num_blocks, activate="mish"):
        super().__init__()
        self.downsample = Convolutional(channels, channels, 3, stride=2, activate=activate)
        self.blocks = nn.Sequential(*[CSPBlock(channels, channels, activate=activate) for _ in range(num_blocks)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


def run():
    torch.manual_seed(0)
    backbone = CSPStage(4, 2, activate="relu")
    head = nn.Conv2d(4, 3, 1)
    optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.01)
    loss = head(backbone(torch.randn(2, 4, 8, 8))).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
