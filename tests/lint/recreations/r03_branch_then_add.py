"""A second branch reads `x`, then the main branch adds to `x` in place.
Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2"""
import torch
import torch.nn as nn


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv1_p = nn.Conv2d(4, 4, 1)
        self.side = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, inp):
        x = self.conv1(inp)
        x_p = self.conv1_p(x)
        x += self.side(inp)  # expect: ADL001
        return x + x_p


def run():
    TwoBranches()(torch.randn(1, 3, 4, 4)).sum().backward()
