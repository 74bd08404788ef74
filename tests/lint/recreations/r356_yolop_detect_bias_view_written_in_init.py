"""YOLOP (like the YOLOv5 code it follows) initialises its detection head's
objectness and class biases after building the model: `b =
mi.bias.view(m.na, -1)`, then `b[:, 4] += math.log(...)` and `b[:, 5:] +=
...`.  `b` is a view of a parameter, and with gradients on the in-place
add fails when the model is built ("a view of a leaf Variable that requires
grad is being used in an in-place operation").  The fix writes through
`b.data` (or under `torch.no_grad()`).
Buggy line: `b[:, 4] += ...` in `MCnet._initialize_biases`.
Expected finding: ADL014 (an in-place write to a view of a leaf that
requires grad).
Source: https://github.com/hustvl/YOLOP/pull/17"""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30),), ch=(8,)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        return [conv(x) for conv, x in zip(self.m, xs)]


class MCnet(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.detector = Detect(nc)
        self._initialize_biases()

    def _initialize_biases(self, cf=None):
        m = self.detector
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # missed: ADL014
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, img):
        return self.detector([self.backbone(img)])


def run():
    torch.manual_seed(0)
    model = MCnet()
    model(torch.randn(1, 3, 8, 8))[0].sum().backward()
