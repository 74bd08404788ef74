"""PWC-Net: the upsampled flow warps the second feature map (grid_sample saves the grid, a view
of the flow), then the flow is scaled in place for the next level.
Source: https://github.com/NVlabs/PWC-Net/pull/62 (remove in-place operations).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
estimator = nn.Conv2d(4, 2, 3, padding=1)
feat1 = torch.randn(1, 2, 5, 5)
feat2 = torch.randn(1, 2, 5, 5)

flow = torch.tanh(estimator(torch.cat([feat1, feat2], 1)))
warped = F.grid_sample(feat2, flow.permute(0, 2, 3, 1), align_corners=False)
flow *= 2.0
loss = (warped - feat1).abs().mean() + flow.abs().mean()
loss.backward()
result = {"loss": loss.detach(), "w": estimator.weight.grad, "b": estimator.bias.grad}
