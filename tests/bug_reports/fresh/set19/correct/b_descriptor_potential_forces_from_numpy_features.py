"""A machine-learned interatomic potential whose radial descriptor is computed with torch from the
positions, so the forces (the negative gradient of the energy) flow through it.
Source: https://github.com/atomistic-machine-learning/schnetpack/issues/215."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

ATOMS, CENTERS, ETA = 6, 8, 4.0
MU = np.linspace(0.5, 3.0, CENTERS)


def radial_descriptor(positions):
    mu = torch.from_numpy(MU).float()
    distances = (positions[:, None, :] - positions[None, :, :]).pow(2).sum(-1).add(torch.eye(len(positions))).sqrt()
    off_diagonal = ~torch.eye(len(positions), dtype=torch.bool)
    gauss = torch.exp(-ETA * (distances[..., None] - mu) ** 2) * off_diagonal[..., None]
    return gauss.sum(dim=1)


def reference_energy(positions):
    distances = torch.cdist(positions, positions) + torch.eye(ATOMS)
    return (1.0 / distances**6 - 1.0 / distances**3).triu(1).sum()


potential = nn.Sequential(nn.Linear(CENTERS, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(potential.parameters(), lr=1e-2)
losses = []
for step in range(10):
    positions = (torch.rand(ATOMS, 3) * 3.0).requires_grad_(True)
    target_energy = reference_energy(positions)
    target_forces = -torch.autograd.grad(target_energy, positions)[0]
    energy = potential(radial_descriptor(positions)).sum()
    forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
    loss = (energy - target_energy.detach()) ** 2 + ((forces - target_forces) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in potential.parameters()]}
