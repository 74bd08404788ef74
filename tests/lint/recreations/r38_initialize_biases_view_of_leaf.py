"""A pruned YOLOv5 builds its detection head and initialises the objectness
and class biases through a view of each conv's bias, without `no_grad()` or
`.data` ("a view of a leaf Variable that requires grad is being used in an
in-place operation", raised while the model is built).
Source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17"""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.stride = torch.tensor([8.0, 16.0, 32.0])

    def forward(self, xs):
        return [self.m[i](xs[i]) for i in range(self.nl)]


class Model(nn.Module):
    def __init__(self, nc=80):
        super().__init__()
        anchors = ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326])
        self.backbone = nn.ModuleList(nn.Conv2d(3, c, 3, padding=1) for c in (4, 8, 16))
        self.head_self = Detect(nc, anchors, ch=(4, 8, 16))
        self._initialize_biases()

    def forward(self, x):
        return self.head_self([conv(x) for conv in self.backbone])

    def _initialize_biases(self, cf=None):
        m = self.head_self
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # missed: ADL014
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # missed: ADL014
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def run():
    Model(nc=2)
