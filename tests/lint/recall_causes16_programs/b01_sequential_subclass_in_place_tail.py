"""A conv-norm-activation block written as an `nn.Sequential` subclass whose
last layer is an in-place ELU (it keeps its output for backward); a
U-Net-like decoder adds the skip connection in place into the block's output.
Raises "modified by an inplace operation"."""
import torch
import torch.nn as nn


class ConvNormAct(nn.Sequential):
    def __init__(self, cin, cout):
        super(ConvNormAct, self).__init__(
            nn.Conv2d(cin, cout, 3, padding=1),
            nn.GroupNorm(2, cout),
            nn.ELU(inplace=True),
        )


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.up = ConvNormAct(c, c)

    def forward(self, x, skip):
        y = self.up(x)
        y += skip  # bug
        return y


def run():
    torch.manual_seed(0)
    dec = Decoder(4)
    x, skip = torch.randn(2, 4, 6, 6), torch.randn(2, 4, 6, 6)
    dec(x, skip).pow(2).mean().backward()
