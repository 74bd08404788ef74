"""SEW-ResNet is built from spiking neurons whose membrane potential `self.v`
persists between calls, so a multi-step forward can integrate over time.
The training loop must call `functional.reset_net(net)` after each
optimizer step; a user's loop (a detection backbone) did not, so the next
batch started from the previous batch's potential, which still carries the
freed graph, and the second `loss.backward()` fails ("Trying to backward
through the graph a second time").  The fix resets the network's neurons
after each step.
Buggy line: `loss.backward()` in `fit_one_epoch`, with no reset between batches.
Expected finding: ADL019 (or ADL017 at `self.v = ...`).
Source: https://github.com/fangwei123456/Spike-Element-Wise-ResNet/issues/19"""
import torch
import torch.nn as nn


class LIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0):
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v = 0.0

    def forward(self, x):
        self.v = self.v + (x - self.v) / self.tau
        spike = torch.sigmoid(4.0 * (self.v - self.v_threshold))
        self.v = self.v * (1.0 - spike)
        return spike

    def reset(self):
        self.v = 0.0


class SEWBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), LIFNode())

    def forward(self, x):
        return self.conv(x) + x


class SEWResNet(nn.Module):
    def __init__(self, T=2, num_classes=3):
        super().__init__()
        self.T = T
        self.stem = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), LIFNode())
        self.block = SEWBlock(4)
        self.fc = nn.Linear(4, num_classes)

    def forward(self, x):
        out = 0
        for _ in range(self.T):
            h = self.block(self.stem(x))
            out = out + self.fc(h.mean((2, 3)))
        return out / self.T


def fit_one_epoch(net, optimizer, batches):
    criterion = nn.CrossEntropyLoss()
    for images, targets in batches:
        optimizer.zero_grad()
        loss = criterion(net(images), targets)
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    net = SEWResNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    batches = [(torch.randn(2, 1, 6, 6), torch.tensor([0, 2])) for _ in range(2)]
    fit_one_epoch(net, optimizer, batches)
