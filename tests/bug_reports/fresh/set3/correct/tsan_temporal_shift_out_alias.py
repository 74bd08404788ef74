"""Temporal shift inside a video super-resolution block: `out = x` instead of a new tensor, so the
channel shifts written into `out` land in `x`, the ReLU output that ReLU's backward needs.
Source: https://github.com/Jee-King/TSAN/issues/3 (fix: `out = x` -> `out = x.clone()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_segment = 4
conv_in = nn.Conv2d(3, 8, 3, padding=1)
conv_out = nn.Conv2d(8, 3, 3, padding=1)
frames = torch.randn(2 * n_segment, 3, 6, 6)
target = torch.randn(2 * n_segment, 3, 6, 6)


def temporal_shift(x, fold_div=4):
    nt, c, h, w = x.shape
    x = x.view(nt // n_segment, n_segment, c, h, w)
    fold = c // fold_div
    out = x.clone()
    out[:, :-1, :fold] = x[:, 1:, :fold].clone()
    out[:, 1:, fold:2 * fold] = x[:, :-1, fold:2 * fold].clone()
    return out.view(nt, c, h, w)


features = torch.relu(conv_in(frames))
restored = conv_out(temporal_shift(features))
loss = (restored - target).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in [*conv_in.parameters(), *conv_out.parameters()]]}
