"""Keypoint loss: distances from `torch.linalg.norm` are zeroed in place for invisible
keypoints, but the norm saved its output for backward.
Source: https://github.com/paninski-lab/lightning-pose/issues/56 (fix: mask out of place).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(6, 7 * 2)
features = torch.randn(4, 6)
target = torch.randn(4, 7, 2)
visible = torch.rand(4, 7) > 0.3

pred = head(features).view(4, 7, 2)
dist = torch.linalg.norm(pred - target, dim=-1)
dist[~visible] = 0.0
loss = dist.sum() / visible.sum()
loss.backward()
result = {"loss": loss.detach(), "w": head.weight.grad, "b": head.bias.grad}
