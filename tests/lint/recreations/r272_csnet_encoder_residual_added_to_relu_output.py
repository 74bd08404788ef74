"""CS-Net's residual encoder ends with `out = self.relu(self.bn2(self.conv2(out)))`
and then `out += residual`.  The ReLU (`inplace=False`) keeps its output for
the backward pass, and `+=` overwrites it, so the first training step fails
("one of the variables needed for gradient computation has been modified by
an inplace operation: ... output 0 of ReluBackward0").  The fix is
`out = out + residual`.
Buggy line: `out += residual` in `ResEncoder.forward`.
Expected finding: ADL001 there.
Source: https://github.com/iMED-Lab/CS-Net/pull/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # expect: ADL001
        out = self.relu(out)
        return out


class CSNet(nn.Module):
    def __init__(self, classes=1, channels=1):
        super().__init__()
        self.enc_input = ResEncoder(channels, 4)
        self.encoder1 = ResEncoder(4, 8)
        self.downsample = nn.MaxPool2d(kernel_size=2, stride=2)
        self.deconv1 = nn.ConvTranspose2d(8, 4, kernel_size=2, stride=2)
        self.final = nn.Conv2d(8, classes, kernel_size=1)

    def forward(self, x):
        enc_input = self.enc_input(x)
        enc1 = self.encoder1(self.downsample(enc_input))
        up1 = torch.cat((enc_input, self.deconv1(enc1)), dim=1)
        return torch.sigmoid(self.final(up1))


def run():
    torch.manual_seed(0)
    net = CSNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    image, label = torch.randn(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
    optimizer.zero_grad()
    loss = F.binary_cross_entropy(net(image), label)
    loss.backward()
    optimizer.step()
