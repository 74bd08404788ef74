"""WavLM encoder: the positional convolution reads `x`, then `x += x_conv` writes into the tensor
the convolution saved.
Source: https://github.com/microsoft/unilm/issues/806 (fixed in unilm PR 1060: `x = x + x_conv`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
pos_conv = nn.Conv1d(8, 8, 3, padding=1, groups=2)
proj = nn.Linear(8, 8)
features = torch.randn(2, 5, 8)

x = proj(features)
x_conv = F.gelu(pos_conv(x.transpose(1, 2))).transpose(1, 2)
x = x + x_conv
loss = x.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in (*pos_conv.parameters(), *proj.parameters())]}
