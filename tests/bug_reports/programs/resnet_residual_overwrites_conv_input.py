"""A residual unit where `x += residual` overwrites the input conv_1 saved.
Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724 (answer: the backward
of conv_1 needs the original x; `x += residual` changed it)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualUnitA(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(4)
        self.conv_1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(4)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)
        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual  # PRIMARY
        x = F.relu(x, inplace=True)
        return x


model = ResidualUnitA()
model(torch.randn(2, 3, 5, 5)).pow(2).mean().backward()
grads = [p.grad for p in model.parameters()]
