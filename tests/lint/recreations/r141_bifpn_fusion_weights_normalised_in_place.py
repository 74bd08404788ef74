"""EfficientDet (a BiFPN re-implementation): the fast normalised fusion of
the BiFPN block takes the learnable fusion weights through a ReLU and
normalises them in place, `w1 = self.w1_relu(self.w1)`, then
`w1 /= torch.sum(w1, dim=0) + self.eps`.  ReLU keeps its result for
backward, so the first `loss.backward()` of training fails ("output 0 of
ReluBackward0, is at version 1; expected version 0"); the reported fix is
`w1 = w1 / (torch.sum(w1, dim=0) + self.eps)`.
Source: https://github.com/toandaominh1997/EfficientDet.Pytorch/issues/161"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class BiFPNBlock(nn.Module):
    def __init__(self, feature_size=4, epsilon=0.0001):
        super().__init__()
        self.epsilon = epsilon
        self.p3_td = ConvBlock(feature_size)
        self.p4_td = ConvBlock(feature_size)
        self.p4_out = ConvBlock(feature_size)
        self.p5_out = ConvBlock(feature_size)
        self.w1 = nn.Parameter(torch.Tensor(2, 2))
        self.w1_relu = nn.ReLU()
        self.w2 = nn.Parameter(torch.Tensor(3, 2))
        self.w2_relu = nn.ReLU()
        nn.init.constant_(self.w1, 1.0)
        nn.init.constant_(self.w2, 1.0)

    def forward(self, inputs):
        p3_x, p4_x, p5_x = inputs
        w1 = self.w1_relu(self.w1)
        w1 /= torch.sum(w1, dim=0) + self.epsilon  # expect: ADL001
        w2 = self.w2_relu(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.epsilon  # expect: ADL001
        p5_td = p5_x
        p4_td = self.p4_td(w1[0, 0] * p4_x + w1[1, 0] * F.interpolate(p5_td, scale_factor=2))
        p3_td = self.p3_td(w1[0, 1] * p3_x + w1[1, 1] * F.interpolate(p4_td, scale_factor=2))
        p3_out = p3_td
        p4_out = self.p4_out(w2[0, 0] * p4_x + w2[1, 0] * p4_td + w2[2, 0] * F.max_pool2d(p3_out, 2))
        p5_out = self.p5_out(w2[0, 1] * p5_x + w2[1, 1] * p5_td + w2[2, 1] * F.max_pool2d(p4_out, 2))
        return [p3_out, p4_out, p5_out]


class Detector(nn.Module):
    def __init__(self, feature_size=4):
        super().__init__()
        self.stem = nn.Conv2d(3, feature_size, 3, padding=1)
        self.bifpn = BiFPNBlock(feature_size)
        self.head = nn.Conv2d(feature_size, 1, 1)

    def forward(self, img):
        p3 = self.stem(img)
        p4 = F.avg_pool2d(p3, 2)
        p5 = F.avg_pool2d(p4, 2)
        features = self.bifpn([p3, p4, p5])
        return sum(self.head(f).mean() for f in features)


def train(model, images, epochs=1):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for _ in range(epochs):
        for img in images:
            optimizer.zero_grad()
            loss = model(img) ** 2
            loss.backward()
            optimizer.step()


def run():
    torch.manual_seed(0)
    train(Detector(), [torch.randn(2, 3, 8, 8)])
