"""Electrostatics of a periodic box of point charges with an Ewald split: a real-space part
(erfc-screened pairs within a cutoff) and a reciprocal-space part (a sum over wave vectors). The
script first estimates the pressure from the real-space virial, for which it calls backward() on
the real-space energy and reads `positions.grad`; it then calls backward() on the total energy and
takes the forces as `-positions.grad`. The first backward's gradient is still there, so the forces
hold the real-space forces twice; nothing raises.
Source: https://github.com/lab-cosmo/torch-pme/issues/188 ("Force calculation yields different
results using different methods": `energy.backward(); forces = -positions.grad` differs from
`torch.autograd.grad(-energy, positions)`, because gradients had already been accumulated into the
positions by operations done before the calculator).
expect: silent"""
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
energy.backward()
forces = -positions.grad

result = {"energy": energy.detach(), "forces": forces.detach().clone(), "pressure": pressure.detach()}
