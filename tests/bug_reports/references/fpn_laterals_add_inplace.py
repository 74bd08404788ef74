import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
lateral_convs = nn.ModuleList([nn.Conv2d(c, 4, 1) for c in (2, 3, 5)])
feats = [torch.randn(1, 2, 8, 8), torch.randn(1, 3, 4, 4), torch.randn(1, 5, 2, 2)]

laterals = [F.relu(conv(f)) for conv, f in zip(lateral_convs, feats)]
for i in range(len(laterals) - 1, 0, -1):
    prev_shape = laterals[i - 1].shape[2:]
    laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode="nearest")
sum(l.pow(2).sum() for l in laterals).backward()
grads = [p.grad for p in lateral_convs.parameters()]
