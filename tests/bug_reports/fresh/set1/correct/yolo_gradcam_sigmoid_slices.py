"""YOLO head decoded in place for Grad-CAM: `y[..., 0:2] = ...` then `y[..., 2:4] = ...` on the
sigmoid's output, which sigmoid saved; two writes of one kind.
Source: https://github.com/jacobgil/pytorch-grad-cam/issues/215 (fix: decode out of place).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv2d(4, 6, 1)
feature = torch.randn(1, 4, 3, 3)
grid = torch.randn(1, 3, 3, 2)
anchor = torch.rand(2) + 0.5
stride = 8.0

y = conv(feature).permute(0, 2, 3, 1).sigmoid()
xy = (y[..., 0:2] * 2 - 0.5 + grid) * stride
wh = (y[..., 2:4] * 2) ** 2 * anchor
y = torch.cat((xy, wh, y[..., 4:]), -1)
score = (y[..., 4] * y[..., 5]).sum() + y[..., 0:4].mean()
score.backward()
result = {"score": score.detach(), "w": conv.weight.grad, "b": conv.bias.grad}
