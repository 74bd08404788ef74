"""Training YOLOv5 (in a fire-and-smoke detection project) stops in
`Model.__init__` with "RuntimeError: a view of a leaf Variable that requires
grad is being used in an in-place operation": `_initialize_biases` takes
`b = mi.bias.view(m.na, -1)` of each detection convolution's bias (a leaf
Parameter) and adds the objectness and class priors with `b[:, 4] += ...` and
`b[:, 5:] += ...` outside `no_grad()`, which newer torch versions refuse
(the fix writes through `b.data`).  Re-created as the Detect head, the model
constructor calling `_initialize_biases`, and a training step.
Buggy line: `b[:, 4] += math.log(8 / (640 / s) ** 2)` (and the class prior).
Source: https://github.com/gengyanlei/fire-smoke-detect-yolov4/issues/33"""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(16, 32)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8., 16.])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        return [self.m[i](xs[i]) for i in range(self.nl)]


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.model = nn.ModuleList([*self.backbone, Detect(nc)])
        self._initialize_biases()

    def _initialize_biases(self, cf=None):
        m = self.model[-1]
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # missed: ADL014
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        p3 = self.backbone[0](x)
        p4 = self.backbone[1](p3)
        return self.model[-1]([p3, p4])


def run():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    preds = model(torch.randn(2, 3, 32, 32))
    loss = sum(p.pow(2).mean() for p in preds)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
