"""Ewald electrostatics whose forces come from `torch.autograd.grad` of the total energy, so the
gradient left in `positions.grad` by the virial's backward() is not added to them.
Source: https://github.com/lab-cosmo/torch-pme/issues/188."""
import itertools
import math

import torch

torch.manual_seed(0)

BOX, ALPHA, CUTOFF, K_MAX = 4.0, 1.2, 2.0, 3

n_atoms = 8
positions = (torch.rand(n_atoms, 3) * BOX).requires_grad_(True)
charges = torch.tensor([1.0, -1.0] * (n_atoms // 2))


def real_space_energy(positions):
    delta = positions[:, None, :] - positions[None, :, :]
    delta = delta - BOX * torch.round(delta / BOX)
    pair = ~torch.eye(n_atoms, dtype=torch.bool)
    distance = delta[pair].norm(dim=-1)
    q_i_q_j = (charges[:, None] * charges[None, :])[pair]
    inside = distance < CUTOFF
    return 0.5 * (q_i_q_j * torch.erfc(ALPHA * distance) / distance)[inside].sum()


def reciprocal_energy(positions):
    wave_vectors = torch.tensor([k for k in itertools.product(range(-K_MAX, K_MAX + 1), repeat=3) if any(k)],
                                dtype=torch.float32) * (2 * math.pi / BOX)
    k_squared = (wave_vectors ** 2).sum(-1)
    phase = positions @ wave_vectors.t()
    structure_real = (charges[:, None] * torch.cos(phase)).sum(0)
    structure_imag = (charges[:, None] * torch.sin(phase)).sum(0)
    weight = torch.exp(-k_squared / (4 * ALPHA ** 2)) / k_squared
    return (2 * math.pi / BOX ** 3) * (weight * (structure_real ** 2 + structure_imag ** 2)).sum()


short_range = real_space_energy(positions)
short_range.backward()
virial = (positions.detach() * -positions.grad).sum()
pressure = (n_atoms + virial / 3.0) / BOX ** 3

energy = real_space_energy(positions) + reciprocal_energy(positions)
forces = -torch.autograd.grad(energy, positions)[0]

result = {"energy": energy.detach(), "forces": forces.detach().clone(), "pressure": pressure.detach()}
