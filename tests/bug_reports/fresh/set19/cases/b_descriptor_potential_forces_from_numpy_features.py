"""A machine-learned interatomic potential trained on energies and forces. The atoms are described
by radial symmetry functions (Gaussians of the pair distances) that an external descriptor routine
computes in NumPy from the positions, and a small network maps each atom's descriptor to an atomic
energy. The forces are the negative gradient of the energy with respect to the positions, but the
positions never enter the graph (the descriptor came back from NumPy as a new tensor), so
`torch.autograd.grad(energy, positions)` raises "One of the differentiated Tensors appears to not
have been used in the graph".
Source: https://github.com/atomistic-machine-learning/schnetpack/issues/215 ("incorporate other
descriptors": descriptors from the DScribe package used as a black box train on energies, but
training on forces fails with that error because the positions do not appear in the network; the
maintainers answered the force needs the chain rule through the descriptor).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

ATOMS, CENTERS, ETA = 6, 8, 4.0
MU = np.linspace(0.5, 3.0, CENTERS)


def radial_descriptor(positions):
    # Written with NumPy, as the external descriptor package is.
    pos = positions.detach().numpy()
    distances = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    off_diagonal = ~np.eye(len(pos), dtype=bool)
    gauss = np.exp(-ETA * (distances[..., None] - MU) ** 2) * off_diagonal[..., None]
    return torch.from_numpy(gauss.sum(axis=1)).float()


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
