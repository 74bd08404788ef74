"""Diffusion model residual block: `h += x` on the block's last activation.
Source: https://github.com/buggyyang/CDC_compression/issues/1 (fix: `h = h + x`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.block = nn.Sequential(nn.Conv1d(channels, channels, 3, padding=1), nn.Tanh())

    def forward(self, x, t_emb):
        h = self.block(x + t_emb)
        h = h + x
        return h


block = ResBlock(3)
x = torch.randn(2, 3, 8)
t_emb = torch.randn(2, 3, 1)
noise = torch.randn(2, 3, 8)
loss = (block(x, t_emb) - noise).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in block.parameters()]}
