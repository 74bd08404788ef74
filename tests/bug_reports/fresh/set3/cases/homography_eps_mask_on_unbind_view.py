"""Unsupervised homography estimation: the homogeneous coordinate of the projected grid, a view of an
`unbind` output, gets its near-zero entries replaced in place (`t[t.abs() < eps] = eps`) before the
division; views of `unbind` may not be modified in place.
Source: https://github.com/kail8/UnsupDIS-pytorch/issues/26 (answer: replace the masked write by
`small = (t.detach().abs() < eps).float(); t = t * (1 - small) + small * eps`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
regressor = nn.Linear(16, 8)
patches = torch.randn(2, 16)
target_points = torch.randn(2, 2, 9)
eps = 1e-3
ys, xs = torch.meshgrid(torch.linspace(-1, 1, 3), torch.linspace(-1, 1, 3), indexing="ij")
grid = torch.stack([xs.flatten(), ys.flatten(), torch.ones(9)])

h8 = regressor(patches)
homography = torch.cat([h8, torch.ones(2, 1)], dim=1).view(2, 3, 3)
projected = homography @ grid
losses = []
for b in range(2):
    x_s, y_s, t_s = torch.unbind(projected[b], dim=0)
    t_s_flat = t_s.reshape(-1)
    t_s_flat[t_s_flat.abs() < eps] = eps
    warped = torch.stack([x_s / t_s_flat, y_s / t_s_flat])
    losses.append((warped - target_points[b]).abs().mean())
loss = sum(losses)
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in regressor.parameters()]}
