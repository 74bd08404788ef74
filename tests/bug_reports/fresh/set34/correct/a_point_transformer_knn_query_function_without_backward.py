"""Pointcept, libs/pointops/functions/query.py: the reporter used Point Transformer (PTv1) inside
their own model, where the point coordinates come out of a learned network, and `loss.backward()`
failed with "NotImplementedError: You must implement either the backward or vjp method for your
custom autograd.Function to use it with backward mode AD": `class KNNQuery(Function)` has only a
`forward` (neighbour search needs no gradient), yet its `dist` output is used to weight the
upsampling interpolation. The maintainer suggested `torch.no_grad()`; what the reporter found to
work, and the earlier point-transformer thread proposed for the same class, is a `backward` that
returns no gradient for any input (`return None, None, None, None, None`).
Source: https://github.com/Pointcept/Pointcept/issues/343 (also https://github.com/POSTECH-CVLab/point-transformer/issues/34)
expect: raises"""
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


class KNNQuery(Function):
    @staticmethod
    def forward(ctx, nsample, xyz, offset, new_xyz=None, new_offset=None):
        """
        input: coords: (n, 3), new_xyz: (m, 3), offset: (b), new_offset: (b)
        output: idx: (m, nsample) -1 is placeholder, dist2: (m, nsample)
        """
        if new_xyz is None or new_offset is None:
            new_xyz = xyz
            new_offset = offset
        assert xyz.is_contiguous() and new_xyz.is_contiguous()
        idx_all, dist_all = [], []
        start, new_start = 0, 0
        for end, new_end in zip(offset.tolist(), new_offset.tolist()):
            d = torch.cdist(new_xyz[new_start:new_end], xyz[start:end])
            dist, idx = torch.topk(d, nsample, dim=1, largest=False)
            idx_all.append(idx + start)
            dist_all.append(dist)
            start, new_start = end, new_end
        return torch.cat(idx_all).int(), torch.cat(dist_all)

    @staticmethod
    def backward(ctx, a=None, b=None):
        return None, None, None, None, None


knn_query = KNNQuery.apply


def interpolation(xyz, new_xyz, feat, offset, new_offset, k=3):
    """
    input: coords: (m, 3), new_xyz: (n, 3), color: (m, c), offset: (b), new_offset: (b)
    output: (n, c)
    """
    idx, dist = knn_query(k, xyz, offset, new_xyz, new_offset)  # (n, 3), (n, 3)
    dist_recip = 1.0 / (dist + 1e-8)  # (n, 3)
    norm = torch.sum(dist_recip, dim=1, keepdim=True)
    weight = dist_recip / norm  # (n, 3)
    new_feat = torch.zeros((new_xyz.shape[0], feat.shape[1]))
    for i in range(k):
        new_feat += feat[idx[:, i].long(), :] * weight[:, i].unsqueeze(-1)
    return new_feat


class TransitionUp(nn.Module):
    def __init__(self, in_planes, out_planes):
        super().__init__()
        self.linear1 = nn.Sequential(nn.Linear(out_planes, out_planes), nn.ReLU())
        self.linear2 = nn.Sequential(nn.Linear(in_planes, out_planes), nn.ReLU())

    def forward(self, pxo1, pxo2):
        p1, x1, o1 = pxo1
        p2, x2, o2 = pxo2
        return self.linear1(x1) + interpolation(p2, p1, self.linear2(x2), o2, o1)


class DeformedPointNet(nn.Module):
    """The reporter's model: a small network moves the input points before the PTv1 decoder."""

    def __init__(self, c=6, planes=16, num_classes=4):
        super().__init__()
        self.offset_net = nn.Sequential(nn.Linear(c, planes), nn.ReLU(), nn.Linear(planes, 3))
        self.enc1 = nn.Sequential(nn.Linear(c, planes), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Linear(planes, 2 * planes), nn.ReLU())
        self.up = TransitionUp(2 * planes, planes)
        self.cls = nn.Linear(planes, num_classes)

    def forward(self, coord, feat, offset):
        p1 = coord + 0.1 * torch.tanh(self.offset_net(feat))
        x1 = self.enc1(feat)
        # every fourth point of each cloud as the coarse level
        keep, new_offset, count = [], [], 0
        start = 0
        for end in offset.tolist():
            sel = torch.arange(start, end, 4)
            keep.append(sel)
            count += sel.numel()
            new_offset.append(count)
            start = end
        keep = torch.cat(keep)
        p2 = p1[keep].contiguous()
        x2 = self.enc2(x1[keep])
        o2 = torch.tensor(new_offset, dtype=torch.int32)
        x = self.up([p1.contiguous(), x1, offset], [p2, x2, o2])
        return self.cls(x)


model = DeformedPointNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.CrossEntropyLoss()
losses = []
for step in range(3):
    coord = torch.rand(48, 3)
    feat = torch.cat([coord, torch.rand(48, 3)], dim=1)
    offset = torch.tensor([24, 48], dtype=torch.int32)
    segment = torch.randint(0, 4, (48,))
    output = model(coord, feat, offset)
    loss = criterion(output, segment)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
