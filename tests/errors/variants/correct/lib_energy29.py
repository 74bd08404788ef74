"""Energy models."""
import torch
from torch import nn


class AnchorEnergy(nn.Module):
    """E(x) = -log sum_k w_k exp(-|x - a_k|): a soft mixture of learned anchors."""

    def __init__(self, anchors=4, features=2):
        super().__init__()
        self.anchors = nn.Parameter(torch.randn(anchors, features) * 2)
        self.log_weights = nn.Parameter(torch.zeros(anchors))

    def forward(self, x):
        distances = (x.unsqueeze(1) - self.anchors).pow(2).sum(-1).sqrt()  # PRIMARY
        return -torch.logsumexp(self.log_weights - distances, dim=1)
