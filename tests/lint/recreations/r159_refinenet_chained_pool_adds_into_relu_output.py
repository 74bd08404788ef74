"""pytorch_refinenet (RefineNet for semantic segmentation): the chained
residual pooling block applies an in-place ReLU, keeps the result as the
first pooling path and then adds each pooled path to it in place,
`x = self.relu(x); path = x; path = block(path); x += path`.  The ReLU keeps
its result, and the first max-pool keeps its input, both `x`, so training
fails at `loss.backward()` ("one of the variables needed for gradient
computation has been modified by an inplace operation"); the residual conv
unit's in-place ReLU also overwrites its own input `x`, which it adds back
at the end.  The fix: `x = x + path`, and `self.conv1(x)`.
Source: https://github.com/thomasjpfan/pytorch_refinenet/issues/2"""
import torch
import torch.nn as nn


class ResidualConvUnit(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(x)
        out = self.conv1(out)
        out = self.relu(out)
        out = self.conv2(out)
        return out + x


class ChainedResidualPool(nn.Module):
    def __init__(self, feats):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        for i in range(1, 4):
            self.add_module(f"block{i}", nn.Sequential(
                nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                nn.Conv2d(feats, feats, kernel_size=3, stride=1, padding=1, bias=False)
            ))

    def forward(self, x):
        x = self.relu(x)
        path = x
        for i in range(1, 4):
            path = self.__getattr__(f"block{i}")(path)
            x += path  # expect: ADL001
        return x


class RefineNetBlock(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.rcu = nn.Sequential(ResidualConvUnit(features), ResidualConvUnit(features))
        self.crp = ChainedResidualPool(features)
        self.output_conv = ResidualConvUnit(features)

    def forward(self, x):
        return self.output_conv(self.crp(self.rcu(x)))


class RefineNet(nn.Module):
    def __init__(self, features=4, num_classes=2):
        super().__init__()
        self.layer1 = nn.Conv2d(3, features, kernel_size=3, padding=1)
        self.refinenet = RefineNetBlock(features)
        self.output_conv = nn.Conv2d(features, num_classes, kernel_size=1)

    def forward(self, x):
        return self.output_conv(self.refinenet(self.layer1(x)))


def run():
    torch.manual_seed(0)
    net = RefineNet()
    criterion = nn.MSELoss()
    output = net(torch.randn(2, 3, 8, 8))
    loss = criterion(output, torch.randn(2, 2, 8, 8))
    net.zero_grad()
    loss.backward()
