"""ER-Net's 3D residual encoder adds its shortcut in place to the output of a
(not in-place) ReLU; ReluBackward0 keeps that output, so backward() fails
("output 0 of ReluBackward0, is at version 1; expected version 0").
Source: https://github.com/iMED-Lab/ER-Net/pull/3"""
import torch
import torch.nn as nn


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(out_channels)
        self.conv2 = nn.Conv3d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm3d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv3d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # expect: ADL001
        out = self.relu(out)
        return out


class Encoder(nn.Module):
    def __init__(self, channels=1):
        super(Encoder, self).__init__()
        self.enc_input = ResEncoder(channels, 4)
        self.encoder1 = ResEncoder(4, 8)
        self.downsample = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        enc_input = self.enc_input(x)
        down1 = self.downsample(enc_input)
        return self.encoder1(down1)


def run():
    model = Encoder()
    criterion = nn.MSELoss()
    volume = torch.randn(2, 1, 8, 8, 8)
    out = model(volume)
    loss = criterion(out, torch.zeros_like(out))
    loss.backward()
