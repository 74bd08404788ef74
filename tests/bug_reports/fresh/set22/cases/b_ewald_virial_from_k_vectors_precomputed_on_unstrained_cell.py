"""The reciprocal-space (Ewald) energy of charges in a triclinic box, with the virial taken by
autograd as the derivative of the energy with respect to a homogeneous strain applied to the
positions and the cell. The wave vectors are generated once from the unstrained cell and reused,
as a precomputed constant, so the strain derivative misses how the wave vectors follow the cell:
the virial is wrong and nothing raises.
Source: https://github.com/NVIDIA/nvalchemi-toolkit-ops/issues/136 ("`ewald_reciprocal_space`
autograd silently returns a wrong virial" with k_vectors "built once from the unstrained cell: a
constant w.r.t. the strain"; https://github.com/NVIDIA/nvalchemi-toolkit-ops/issues/147 gives the
fix: precompute the integer Miller indices and rebuild the wave vectors from the strained cell, so
dk/dcell is in the graph).
expect: silent"""
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
energy = reciprocal_energy(positions, cell, K_VECTORS)
virial = -torch.autograd.grad(energy, strain)[0]

result = {"energy": energy.detach(), "virial": virial}
