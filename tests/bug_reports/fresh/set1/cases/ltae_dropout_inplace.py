"""Lightweight temporal attention encoder (satellite time series): the MLP uses
`nn.Dropout(inplace=True)` after a ReLU, whose saved output it overwrites.
Source: https://github.com/torchgeo/torchgeo/issues/3735 (fix: drop inplace=True).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2, inplace=True), nn.Linear(16, 4))
attention = nn.MultiheadAttention(8, 2, batch_first=True)
series = torch.randn(2, 5, 8)

torch.manual_seed(1)
attended, _ = attention(series, series, series)
out = mlp(attended.mean(1))
loss = out.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in mlp.parameters()]}
