"""An anime-character detector built on YOLOv5: when the model is constructed, `Model.__init__`
calls `_initialize_biases()`, which views each detection conv's bias as (anchors, outputs) and adds
the objectness and class priors in place, `b = mi.bias.view(m.na, -1); b[:, 4] += ...`. The bias
is a leaf that requires grad, so building the model fails with "a view of a leaf Variable that
requires grad is being used in an in-place operation". The change (upstream YOLOv5's): write the
priors through `.data`, `b.data[:, 4] += ...` and `b.data[:, 5:] += ...`, outside autograd.
Source: https://github.com/zymk9/yolov5_anime/issues/6
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(4, 8)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8.0, 16.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        out = []
        for i in range(self.nl):
            bs, _, ny, nx = xs[i].shape
            out.append(self.m[i](xs[i]).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2))
        return out


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.backbone2 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.model = nn.ModuleList([self.backbone1, self.backbone2, Detect(nc=nc)])
        self._initialize_biases()  # only run once

    def forward(self, x):
        p3 = torch.relu(self.backbone1(x))
        p4 = torch.relu(self.backbone2(p3))
        return self.model[-1]([p3, p4])

    def _initialize_biases(self, cf=None):
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b.data[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model(nc=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
imgs = torch.rand(2, 3, 16, 16)
losses = []
for step in range(3):
    outs = model(imgs)
    obj_target = [torch.zeros_like(o[..., 4]) for o in outs]
    obj_target[0][:, 0, 1, 1] = 1.0
    loss = sum(nn.functional.binary_cross_entropy_with_logits(o[..., 4], t)
               for o, t in zip(outs, obj_target))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"params": {k: v.detach().clone() for k, v in model.state_dict().items()},
          "losses": torch.tensor(losses)}
