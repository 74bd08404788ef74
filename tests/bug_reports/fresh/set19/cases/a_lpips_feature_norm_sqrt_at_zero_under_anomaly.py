"""Perceptual (LPIPS) loss for an image restoration network (richzhang/PerceptualSimilarity,
lpips/__init__.py `normalize_tensor`): each feature vector is divided by its length, computed as
`sqrt(sum(x**2))` with the epsilon added outside the square root. Where a feature vector is all
zero (here: the black, masked border of the restored image seen through a bias-free 1x1 layer and
a ReLU) the square root sits at 0 and its backward is 0 * inf = nan. With anomaly detection on,
as the reporters had it, backward stops with "Function 'SqrtBackward0' returned nan values in its
0th output".
Source: https://github.com/richzhang/PerceptualSimilarity/issues/121 (the fix proposed there and
in issue #69: put the epsilon under the square root).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def normalize_tensor(in_feat, eps=1e-10):
    norm_factor = torch.sqrt(torch.sum(in_feat ** 2, dim=1, keepdim=True))
    return in_feat / (norm_factor + eps)


class FrozenFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Conv2d(3, 6, kernel_size=1, bias=False)
        self.requires_grad_(False)

    def forward(self, image):
        return F.relu(self.layer(image))


def perceptual_distance(features, fake, real):
    a = normalize_tensor(features(fake))
    b = normalize_tensor(features(real))
    return ((a - b) ** 2).sum(dim=1).mean()


restorer = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
features = FrozenFeatures()
optimizer = torch.optim.Adam(restorer.parameters(), lr=1e-3)

mask = torch.zeros(1, 1, 8, 8)
mask[..., 1:-1, 1:-1] = 1.0  # the valid region; the border is black padding
degraded = torch.rand(2, 3, 8, 8) * mask
clean = torch.rand(2, 3, 8, 8) * mask

losses = []
with torch.autograd.detect_anomaly():
    for step in range(3):
        optimizer.zero_grad()
        restored = restorer(degraded) * mask
        loss = perceptual_distance(features, restored, clean) + F.l1_loss(restored, clean)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in restorer.parameters()]}
