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
        x = x + residual
        x = F.relu(x, inplace=True)
        return x


model = ResidualUnitA()
model(torch.randn(2, 3, 5, 5)).pow(2).mean().backward()
grads = [p.grad for p in model.parameters()]
