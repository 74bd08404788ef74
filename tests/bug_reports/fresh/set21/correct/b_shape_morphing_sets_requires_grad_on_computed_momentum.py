"""Shape registration by geodesic shooting where the morphing routine marks the momentum as
requiring grad only when it does not already (a momentum computed from a learned vector already
requires grad and keeps its graph to that vector).
Source: https://github.com/scikit-shapes/scikit-shapes/pull/60."""
import math

import torch

torch.manual_seed(0)

N_POINTS, SCALE, N_STEPS = 30, 0.5, 3


def gaussian_kernel(points):
    squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1)
    return torch.exp(-squared / (2 * SCALE ** 2))


def hamiltonian(points, momentum):
    return 0.5 * (momentum * (gaussian_kernel(points) @ momentum)).sum()


def morph(points, momentum):
    """Shoot `points` along the geodesic that starts with `momentum` (symplectic Euler)."""
    if not momentum.requires_grad:
        momentum.requires_grad = True
    points = points.clone().requires_grad_(True)
    for _ in range(N_STEPS):
        energy = hamiltonian(points, momentum)
        d_momentum, d_points = torch.autograd.grad(energy, (momentum, points), create_graph=True)
        points = points + d_momentum / N_STEPS
        momentum = momentum - d_points / N_STEPS
    return points


golden = math.pi * (3.0 - math.sqrt(5.0))
index = torch.arange(N_POINTS, dtype=torch.float32)
height = 1.0 - 2.0 * (index + 0.5) / N_POINTS
radius = torch.sqrt(1.0 - height ** 2)
sphere = torch.stack([radius * torch.cos(golden * index), radius * torch.sin(golden * index), height], dim=1)
target = sphere + torch.tensor([0.3, -0.2, 0.1])

translation = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.Adam([translation], lr=0.05)
losses = []
for step in range(6):
    momentum = translation.repeat(N_POINTS).reshape(N_POINTS, 3)
    morphed = morph(sphere, momentum)
    loss = ((morphed - target) ** 2).sum(-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "translation": translation.detach().clone()}
