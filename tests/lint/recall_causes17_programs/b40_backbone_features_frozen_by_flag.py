"""Cause 2 (ADL040, r630): a linear probe means to stop gradients at the
backbone's features by setting `requires_grad_(False)` on them; they are a
module's output, not a leaf, so the call raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def probe_step(backbone, probe, optimizer, images, labels):
    features = backbone(images).flatten(1)
    features.requires_grad_(False)  # bug
    loss = F.cross_entropy(probe(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    probe = nn.Linear(4, 3)
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
    probe_step(backbone, probe, optimizer, torch.randn(2, 3, 8, 8), torch.tensor([0, 2]))
