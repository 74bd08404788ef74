"""An environment model adds a skip connection in place to the output of an
`nn.Sequential` that ends in a (not in-place) `nn.ReLU`: ReluBackward0 keeps
its output, so backward() fails (found while measuring precision on held-out
repositories).
Source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/blob/d5a421d63c6d/Chapter22/lib/i2a.py#L67-L71"""
import torch
import torch.nn as nn


class EnvironmentModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.conv2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())

    def forward(self, frames):
        c1_out = self.conv1(frames)
        c2_out = self.conv2(c1_out)
        c2_out += c1_out  # expect: ADL001
        return c2_out


def run():
    EnvironmentModel()(torch.randn(1, 3, 5, 5)).sum().backward()
