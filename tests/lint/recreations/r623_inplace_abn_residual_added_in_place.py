"""inplace_abn (in-place activated batch norm): a user's ResNet block ends
with the in-place ABN (normalisation followed by an in-place leaky ReLU) and
then adds the shortcut in place, `out += residual`.  The activation's
backward needs its output, which the residual add overwrites, and training
fails with "one of the variables needed for gradient computation has been
modified by an inplace operation" (the reporter: "There was an inplace
residual connection that caused the problem ... there cannot be two back to
back in-place operations").  Re-created with a BatchNorm + in-place
LeakyReLU pair standing in for InPlaceABN.
Buggy line: `out += residual` in `Bottleneck.forward`.
Source: https://github.com/mapillary/inplace_abn/issues/14"""
import torch
import torch.nn as nn


class ABN(nn.Sequential):
    def __init__(self, channels, slope=0.01):
        super().__init__(nn.BatchNorm2d(channels), nn.LeakyReLU(slope, inplace=True))


class Bottleneck(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn1 = ABN(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = ABN(channels)

    def forward(self, x):
        residual = x
        out = self.bn1(self.conv1(x))
        out = self.bn2(self.conv2(out))
        out += residual  # expect: ADL001
        return out


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), Bottleneck(8), Bottleneck(8),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
