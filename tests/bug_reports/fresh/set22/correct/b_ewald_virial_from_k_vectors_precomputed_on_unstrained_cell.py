"""The same Ewald virial with the wave vectors rebuilt from the strained cell out of the
precomputed Miller indices, so their dependence on the cell is in the graph.
Source: https://github.com/NVIDIA/nvalchemi-toolkit-ops/issues/147."""
import itertools
import math

import torch

torch.set_default_dtype(torch.float64)

CELL = torch.tensor([[6.0, 0.0, 0.0], [1.0, 5.0, 0.0], [0.5, 0.7, 5.5]])
POSITIONS = torch.tensor([[0.5, 0.5, 0.5], [3.0, 1.0, 2.0], [1.5, 3.5, 4.0], [4.5, 2.5, 1.0]])
CHARGES = torch.tensor([1.0, -1.0, 0.7, -0.7])
ALPHA, K_MAX = 0.4, 3


def reciprocal(cell):
    return 2 * math.pi * torch.linalg.inv(cell).transpose(0, 1)


MILLER = torch.tensor([m for m in itertools.product(range(-K_MAX, K_MAX + 1), repeat=3) if any(m)],
                      dtype=torch.float64)
K_VECTORS = MILLER @ reciprocal(CELL).transpose(0, 1)


def reciprocal_energy(positions, cell, k_vectors):
    volume = torch.linalg.det(cell).abs()
    k_squared = (k_vectors ** 2).sum(-1)
    phase = positions @ k_vectors.transpose(0, 1)
    s_real = (CHARGES[:, None] * torch.cos(phase)).sum(0)
    s_imag = (CHARGES[:, None] * torch.sin(phase)).sum(0)
    green = torch.exp(-k_squared / (4 * ALPHA ** 2)) / k_squared
    return (2 * math.pi / volume) * (green * (s_real ** 2 + s_imag ** 2)).sum() / 2


strain = torch.zeros(3, 3, requires_grad=True)
deformation = torch.eye(3) + 0.5 * (strain + strain.transpose(0, 1))
positions = POSITIONS @ deformation
cell = CELL @ deformation
energy = reciprocal_energy(positions, cell, MILLER @ reciprocal(cell).transpose(0, 1))
virial = -torch.autograd.grad(energy, strain)[0]

result = {"energy": energy.detach(), "virial": virial}
