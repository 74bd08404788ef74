"""Anchor-free detector (FCOS / AutoAssign heads of open-mmlab/mmdetection): the regression branch
keeps box distances positive with `F.relu(bbox_pred)` and then multiplies them by the level's
stride in place, `bbox_pred *= stride`. ReLU saves its output for backward, so from PyTorch 1.10
on training raises "one of the variables needed for gradient computation has been modified by an
inplace operation: ... output 0 of ReluBackward0, is at version 1".
Source: https://github.com/open-mmlab/mmdetection/pull/7074 ("Fix bbox clamp in pt1.10": the
merged fix replaces `F.relu(bbox_pred)` with `bbox_pred.clamp(min=0)`, which saves its input, not
its output, so the in-place scaling no longer touches a saved tensor).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CHANNELS, STRIDES = 8, (8, 16)


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return x * self.scale


class BoxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_reg = nn.Conv2d(CHANNELS, 4, 3, padding=1)
        self.scales = nn.ModuleList(Scale() for _ in STRIDES)

    def forward_single(self, feature, scale, stride):
        bbox_pred = scale(self.conv_reg(feature))
        bbox_pred = bbox_pred.clamp(min=0)
        bbox_pred *= stride
        return bbox_pred

    def forward(self, features):
        return [self.forward_single(f, s, stride) for f, s, stride in zip(features, self.scales, STRIDES)]


head = BoxHead()
optimizer = torch.optim.SGD(head.parameters(), lr=1e-4)
features = [torch.randn(2, CHANNELS, 8, 8), torch.randn(2, CHANNELS, 4, 4)]
targets = [torch.rand(2, 4, 8, 8) * 64, torch.rand(2, 4, 4, 4) * 128]

losses = []
for step in range(3):
    optimizer.zero_grad()
    preds = head(features)
    loss = sum(F.smooth_l1_loss(p, t) for p, t in zip(preds, targets))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in head.parameters()]}
