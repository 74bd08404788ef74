"""An issue on a zero-shot image-restoration model: training stops with "one
of the variables needed for gradient computation has been modified by an
inplace operation" even after every `nn.ReLU(inplace=True)` was made
out-of-place; the maintainer's answer: "Add .clone() in SKConv Layer's
forward pass".  Re-created as a selective-kernel convolution: branches of
conv -> BN -> ReLU, the fused map `U` summed in place into the first
branch's output, global pooling, a squeeze FC and per-branch attention
vectors, used in a small restoration network and its training loop.
Raises at the first backward (the ReLU's saved output was written).
Buggy line: `feats_u += branch_outs[i]` (adds into the first branch's ReLU
output, which ReLU's backward needs).
Source: https://github.com/aupendu/zero-restore/issues/7"""
import torch
import torch.nn as nn


class SKConv(nn.Module):
    def __init__(self, channels=8, branches=2, reduction=2):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Sequential(
                nn.Conv2d(channels, channels, 3, padding=1 + i, dilation=1 + i, bias=False),
                nn.BatchNorm2d(channels),
                nn.ReLU(inplace=False),
            )
            for i in range(branches)
        )
        hidden = max(channels // reduction, 4)
        self.fc = nn.Sequential(nn.Linear(channels, hidden), nn.ReLU())
        self.fcs = nn.ModuleList(nn.Linear(hidden, channels) for _ in range(branches))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        branch_outs = [conv(x) for conv in self.convs]
        feats = torch.stack(branch_outs, dim=1)
        feats_u = branch_outs[0]
        for i in range(1, len(branch_outs)):
            feats_u += branch_outs[i]  # missed: ADL001
        s = feats_u.mean(dim=(2, 3))
        z = self.fc(s)
        attn = torch.stack([fc(z) for fc in self.fcs], dim=1)
        attn = self.softmax(attn).unsqueeze(-1).unsqueeze(-1)
        return (feats * attn).sum(dim=1)


class RestoreNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 8, 3, padding=1)
        self.sk = SKConv(8)
        self.tail = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        return x + self.tail(self.sk(self.head(x)))


def run():
    torch.manual_seed(0)
    net = RestoreNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(2):
        noisy, clean = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
        loss = nn.functional.l1_loss(net(noisy), clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
