"""X-Avatar predicts one occupancy per body part for every query point and
takes the minimum over the parts that the skinning weights allow:
`masked_softmax(vec, mask, mode='min')` writes `vec[~mask.bool()] = 1` before
`torch.min`.  The `vec` it gets is a view of one chunk of the network
output (the occupancy channels, split from the colour and normal channels
with `torch.split`), and an output of `split` may not be written in place
("Output 0 of ... is a view and is being modified inplace.  This view is
the output of a function that returns multiple views").  The fix writes a
copy: `vec = vec.masked_fill(~mask.bool(), 1)`.
Buggy line: `vec[~mask.bool()] = 1` in `masked_softmax`.
Expected finding: ADL015 there.
Source: https://github.com/Skype-line/X-Avatar/issues/12"""
import torch
import torch.nn as nn


def masked_softmax(vec, mask, dim=-1, mode="softmax"):
    if mode == "max":
        vec[~mask.bool()] = -100
        value, index = torch.max(vec, dim, keepdim=True)
    elif mode == "min":
        vec[~mask.bool()] = 1  # missed: ADL015
        value, index = torch.min(vec, dim, keepdim=True)
    else:
        raise NotImplementedError
    return value, index


class ImplicitNetwork(nn.Module):
    def __init__(self, n_parts=4):
        super().__init__()
        self.n_parts = n_parts
        self.mlp = nn.Sequential(nn.Linear(3, 16), nn.Softplus(), nn.Linear(16, n_parts + 6))

    def forward(self, pts):
        out = self.mlp(pts)
        occ, color, normal = torch.split(out, [self.n_parts, 3, 3], dim=-1)
        return occ, color, normal


class XAvatarModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = ImplicitNetwork()

    def forward(self, pts, valid_parts):
        occ, color, normal = self.network(pts)
        shape_pd, index = masked_softmax(occ, valid_parts, mode="min")
        return shape_pd, color, normal


def run():
    torch.manual_seed(0)
    model = XAvatarModel()
    pts = torch.randn(8, 3)
    valid_parts = torch.rand(8, 4) > 0.3
    shape_pd, color, normal = model(pts, valid_parts)
    loss = shape_pd.abs().mean() + color.pow(2).mean()
    loss.backward()
