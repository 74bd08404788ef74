"""A pre-activation residual block computes its shortcut with a convolution
of `x`, then its residual branch, an `nn.Sequential` that starts with
`nn.ReLU(inplace=True)`.  The convolution kept `x` for backward; the ReLU
then rectifies `x` itself, and backward fails ("modified by an inplace
operation").  With the residual branch computed first the convolution reads
the rectified `x`, which is why moving one line made the error come and go.
The fix is `nn.ReLU()` (not in place) at the start of the branch.
Buggy line: `resd = self.residual(x)` in `Block.forward`, after
`self.shortcut(x)`.
Expected finding: ADL001 (a write to a tensor the shortcut saved).
Source: https://github.com/pytorch/pytorch/issues/15428"""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super().__init__()
        self.in_chan = in_chan
        self.out_chan = out_chan
        self.stride = stride
        self.residual = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(in_chan, out_chan, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_chan),
            nn.ReLU(),
            nn.Conv2d(out_chan, out_chan, 3, 1, 1, bias=False),
        )
        self.shortcut = nn.Conv2d(in_chan, out_chan, 1, stride, bias=False)

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)  # expect: ADL001
        return resd + sc


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.block = Block(4, 8, stride=2)
        self.head = nn.Linear(8, 2)

    def forward(self, img):
        feat = self.block(self.stem(img))
        return self.head(feat.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    net = Net()
    loss = net(torch.randn(2, 3, 6, 6)).sum()
    loss.backward()
