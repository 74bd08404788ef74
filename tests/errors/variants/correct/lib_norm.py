# helper module of layer_norm_helper_adds_eps_to_std_in_place.py (a held-out variant)
import torch
from torch import nn


class HandLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(torch.ones(dim))

    def forward(self, h):
        centred = h - h.mean(dim=-1, keepdim=True)
        std = centred.pow(2).mean(dim=-1, keepdim=True).sqrt()
        std = std + self.eps  # PRIMARY
        return self.gain * centred / std
