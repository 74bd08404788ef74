"""An in-place dropout right after an in-place LeakyReLU, in a discriminator.
Source: https://github.com/dreamgonfly/GAN-tutorial/issues/1"""
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(6, 8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.3, inplace=True),  # expect: ADL001
            nn.Linear(8, 1),
        )

    def forward(self, x):
        return self.main(x)


def run():
    Discriminator()(torch.randn(4, 6)).sum().backward()
