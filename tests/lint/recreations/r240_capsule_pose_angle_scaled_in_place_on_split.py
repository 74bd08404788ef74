"""A PyTorch port of the stacked capsule autoencoder turns each part
capsule's 6-d pose into an affine transform in `geometric_transform`: it
splits the pose with `torch.split(pose_tensor, 1, -1)` and, in the
non-linear branch, rescales the angle with `theta *= 2. * math.pi`.
`theta` is one of the views `split` returns; autograd does not allow a view
of a multi-output view op to be modified in place ("Output 2 of
SplitBackward0 is a view and is being modified inplace"), so the first
training step fails in the forward pass.  The fix multiplies out of place
(`theta = theta * 2. * math.pi`).
Buggy line: `theta *= 2. * math.pi` in `PartCapsuleEncoder.geometric_transform`.
Expected finding: ADL015 there.
Source: https://github.com/phanideepgampa/stacked-capsule-networks/issues/15"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PartCapsuleEncoder(nn.Module):
    def __init__(self, n_caps=4, feat=8):
        super().__init__()
        self.n_caps = n_caps
        self.conv = nn.Sequential(nn.Conv2d(1, feat, 3, stride=2, padding=1), nn.ReLU())
        self.pose_head = nn.Linear(feat, n_caps * 6)
        self.presence_head = nn.Linear(feat, n_caps)

    @staticmethod
    def geometric_transform(pose_tensor, similarity=False, nonlinear=True):
        scale_x, scale_y, theta, shear, trans_x, trans_y = torch.split(pose_tensor, 1, -1)
        if nonlinear:
            scale_x, scale_y = torch.sigmoid(scale_x) + 1e-2, torch.sigmoid(scale_y) + 1e-2
            trans_x, trans_y, shear = torch.tanh(trans_x * 5.), torch.tanh(trans_y * 5.), torch.tanh(shear * 5.)
            theta *= 2. * math.pi  # expect: ADL015
        else:
            scale_x, scale_y = (abs(i) + 1e-2 for i in (scale_x, scale_y))
        c, s = torch.cos(theta), torch.sin(theta)
        if similarity:
            pose = [scale_x * c, -scale_x * s, trans_x, scale_x * s, scale_x * c, trans_y]
        else:
            pose = [scale_x * c + shear * scale_y * s, -scale_x * s + shear * scale_y * c,
                    trans_x, scale_y * s, scale_y * c, trans_y]
        pose = torch.cat(pose, -1)
        return pose.reshape(*pose.shape[:-1], 2, 3)

    def forward(self, images):
        h = self.conv(images).mean(dim=(2, 3))
        poses = self.pose_head(h).view(-1, self.n_caps, 6)
        presence = torch.sigmoid(self.presence_head(h))
        return self.geometric_transform(poses), presence


def template_loss(transforms, presence, images):
    grid = F.affine_grid(transforms[:, 0], images.shape, align_corners=False)
    rendered = F.grid_sample(images, grid, align_corners=False) * presence[:, :1, None, None]
    return F.mse_loss(rendered, images)


def run():
    torch.manual_seed(0)
    model = PartCapsuleEncoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.rand(2, 1, 8, 8)
    transforms, presence = model(images)
    loss = template_loss(transforms, presence, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
