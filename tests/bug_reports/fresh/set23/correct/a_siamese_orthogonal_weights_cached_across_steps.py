"""Training a siamese image-matching network whose projection is an orthogonal parametrization
(`torch.nn.utils.parametrizations.orthogonal`), with `torch.nn.utils.parametrize.cached()` to
compute the orthogonal weight once instead of once per branch. The user opened the cached context
around the whole training loop: the weight is computed (differentiably) at the first forward and
reused by every later step, so the second `loss.backward()` goes through the first step's graph
again: "Trying to backward through the graph a second time" (and the cached weight would not
follow the optimizer's updates anyway). A maintainer (albanD): the cached result is computed in a
differentiable way, so several backwards inside one cached context backpropagate through it several
times; the cached context has to cover one step's forward and its loss only. The hand-written
version opens `cached()` inside each step.
Source: https://github.com/pytorch/pytorch/issues/71062
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal

torch.manual_seed(0)

FEAT = 8


class SiameseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.proj = orthogonal(nn.Linear(16, FEAT))

    def embed(self, img):
        return F.normalize(self.proj(self.backbone(img)), dim=-1)

    def forward(self, img0, img1):
        return (self.embed(img0) * self.embed(img1)).sum(dim=-1)


model = SiameseNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
img0 = torch.rand(6, 1, 8, 8)
img1 = torch.rand(6, 1, 8, 8)
same = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])

losses = []
for step in range(4):
    optimizer.zero_grad()
    with parametrize.cached():
        pred = model(img0, img1)
        loss = F.binary_cross_entropy_with_logits(pred * 4, same)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
