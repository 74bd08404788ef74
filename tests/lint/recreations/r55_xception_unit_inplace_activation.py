"""Xception unit: the shortcut convolution reads the unit's input, then the
body's first block applies `nn.ReLU(inplace=True)` to that same input, which
the convolution saved for backward ("modified by an inplace operation").
Source: https://github.com/osmr/imgclsmob/issues/13"""
import torch
import torch.nn as nn


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.pw_conv(self.dw_conv(x))


class DwsConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, activate):
        super().__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)
        self.conv = DwsConv(in_channels, out_channels)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)  # missed: ADL001
        x = self.conv(x)
        return self.bn(x)


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True):
        super().__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        self.body = nn.Sequential()
        for i in range(reps):
            self.body.add_module(
                "block{}".format(i + 1),
                DwsConvBlock(in_channels if i == 0 else out_channels, out_channels, activate=(i != 0 or start_with_relu)),
            )
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(3, stride, 1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        x = self.body(x)
        return x + identity


class Xception(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.unit1 = XceptionUnit(8, 16, stride=2, reps=2)
        self.output = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.unit1(self.stem(x))
        return self.output(x.mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = Xception()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = criterion(model(torch.randn(2, 3, 8, 8)), torch.tensor([0, 1]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
