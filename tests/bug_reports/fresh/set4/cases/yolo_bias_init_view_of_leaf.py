"""YOLO detection head: the smart bias initialisation adds log-priors to slices of a view of each
output conv's bias (`b = mi.bias.view(na, -1)`; `b[:, 4] += ...`), an in-place write into a view
of a parameter outside `no_grad`.
Source: https://github.com/WongKinYiu/ScaledYOLOv4/issues/191 ("a view of a leaf Variable that
requires grad is being used in an in-place operation"; maintainer's fix: write through `.data`,
`b[:, 4].data += ...` and `b[:, 5:].data += ...`).
expect: raises"""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=3, na=2, channels=(8, 16), strides=(8.0, 16.0)):
        super().__init__()
        self.nc, self.na, self.no = nc, na, nc + 5
        self.stride = torch.tensor(strides)
        self.m = nn.ModuleList(nn.Conv2d(c, self.na * self.no, 1) for c in channels)

    def forward(self, feats):
        return [conv(f).view(f.shape[0], self.na, self.no, -1) for conv, f in zip(self.m, feats)]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.detect = Detect()
        self._initialize_biases()

    def _initialize_biases(self, cf=None):
        m = self.detect
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        f1 = torch.relu(self.backbone[0](x))
        f2 = torch.relu(self.backbone[1](f1))
        return self.detect([f1, f2])


torch.manual_seed(0)
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
images = torch.rand(2, 3, 16, 16)
outputs = model(images)
objectness_loss = sum(nn.functional.binary_cross_entropy_with_logits(o[:, :, 4], torch.zeros_like(o[:, :, 4])) for o in outputs)
optimizer.zero_grad()
objectness_loss.backward()
optimizer.step()
result = {"loss": objectness_loss.detach(), "biases": [mi.bias.detach() for mi in model.detect.m]}
