"""BDRAR (shadow detection) saves memory by switching every activation and
dropout layer to in-place after building the network: a loop over
`self.modules()` sets `m.inplace = True` on each `nn.ReLU` and each
`nn.Dropout`.  The prediction heads end in `ReLU -> Dropout(0.1) -> Conv`,
so the dropout overwrites the ReLU output that the ReLU keeps for backward,
and training fails ("one of the variables needed for gradient computation
has been modified by an inplace operation"); the author's fix leaves
`nn.Dropout` out of the loop.
Buggy line: `m.inplace = True` for the `nn.Dropout` modules (the failing
write is the head's `self.predict(fuse)`).
Expected finding: ADL001 (at the flag or at the head call).
Source: https://github.com/zijundeng/BDRAR/issues/2"""
import torch
import torch.nn.functional as F
from torch import nn


class _AttentionModule(nn.Module):
    def __init__(self, channels=8):
        super(_AttentionModule, self).__init__()
        self.block = nn.Sequential(
            nn.Conv2d(channels, channels, 1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        return torch.sigmoid(self.block(x))


class BDRAR(nn.Module):
    def __init__(self, channels=8):
        super(BDRAR, self).__init__()
        self.layer0 = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
        self.attention = _AttentionModule(channels)
        self.refine = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
        )
        self.predict = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Dropout(0.1), nn.Conv2d(channels, 1, 1),
        )

        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True  # missed: ADL001

    def forward(self, x):
        layer0 = self.layer0(x)
        fuse = self.refine(layer0) * self.attention(layer0) + layer0
        predict = self.predict(fuse)
        predict = F.interpolate(predict, size=x.size()[2:], mode='bilinear', align_corners=False)
        return predict


def run():
    torch.manual_seed(0)
    net = BDRAR().train()
    optimizer = torch.optim.SGD(net.parameters(), lr=5e-3, momentum=0.9)
    inputs = torch.randn(2, 3, 8, 8)
    labels = (torch.rand(2, 1, 8, 8) > 0.5).float()
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(net(inputs), labels)
    loss.backward()
    optimizer.step()
