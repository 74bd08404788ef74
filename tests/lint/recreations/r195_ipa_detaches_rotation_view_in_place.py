"""Invariant point attention (structure refinement): between refinement
blocks the rotations are detached so that gradients do not flow through the
iterated frames, written in place, `rotations.detach_()`.  `rotations` is a
view (a slice of the quaternion-to-matrix output), and `detach_()` refuses
views: the forward pass fails ("Can't detach views in-place. Use detach()
instead"); the fix writes `rotations = rotations.detach()`.
Buggy line: `rotations.detach_()` in the refinement loop.
Expected finding: a write through a view of a graph tensor (no rule yet).
Source: https://github.com/lucidrains/invariant-point-attention/issues/9"""
import torch
import torch.nn.functional as F
from torch import nn


def quaternion_to_matrix(quaternions):
    r, i, j, k = torch.unbind(quaternions, -1)
    two_s = 2.0 / (quaternions * quaternions).sum(-1)
    o = torch.stack((
        1 - two_s * (j * j + k * k), two_s * (i * j - k * r), two_s * (i * k + j * r),
        two_s * (i * j + k * r), 1 - two_s * (i * i + k * k), two_s * (j * k - i * r),
        two_s * (i * k - j * r), two_s * (j * k + i * r), 1 - two_s * (i * i + j * j),
    ), -1)
    return o.reshape(quaternions.shape[:-1] + (3, 3))


class IPABlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.attn = nn.Linear(dim, dim)
        self.to_update = nn.Linear(dim, 6)

    def forward(self, single_repr, rotations, translations):
        single_repr = single_repr + torch.tanh(self.attn(single_repr))
        return single_repr


class IPATransformer(nn.Module):
    def __init__(self, dim=8, depth=2, detach_rotations=True):
        super().__init__()
        self.layers = nn.ModuleList([IPABlock(dim) for _ in range(depth)])
        self.to_update = nn.ModuleList([nn.Linear(dim, 6) for _ in range(depth)])
        self.detach_rotations = detach_rotations

    def forward(self, single_repr):
        b, n, _ = single_repr.shape
        quaternions = torch.tensor([1., 0., 0., 0.]).expand(b, n, 4)
        rotations = quaternion_to_matrix(quaternions)[..., :3, :3]
        translations = torch.zeros(b, n, 3)
        for block, to_update in zip(self.layers, self.to_update):
            rotations = quaternion_to_matrix(quaternions)[..., :3, :3]
            if self.detach_rotations:
                rotations.detach_()  # missed: ADL005
            single_repr = block(single_repr, rotations, translations)
            quaternion_update, translation_update = to_update(single_repr).chunk(2, dim=-1)
            quaternion_update = F.pad(quaternion_update, (1, 0), value=1.)
            quaternions = quaternions + quaternion_update
            translations = translations + torch.einsum('b n c, b n c r -> b n r', translation_update, rotations)
        return translations


def run():
    torch.manual_seed(0)
    net = IPATransformer()
    coords = net(torch.randn(1, 3, 8))
    coords.sum().backward()
