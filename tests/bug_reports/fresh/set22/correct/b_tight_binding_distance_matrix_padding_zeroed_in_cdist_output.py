"""The same padded tight-binding repulsion with the distance matrix cloned before the padding is
zeroed, so cdist's saved output stays intact and the forces are the gradient of the energy.
Source: https://github.com/tbmalt/tbmalt/pull/76."""
import torch

torch.manual_seed(0)

n_molecules, max_atoms = 3, 5
n_atoms = torch.tensor([5, 3, 4])
padding_atom = torch.arange(max_atoms)[None, :] >= n_atoms[:, None]
positions = torch.randn(n_molecules, max_atoms, 3) * 1.5
positions[padding_atom] = 0.0
positions.requires_grad_(True)

pair_is_padding = padding_atom[:, :, None] | padding_atom[:, None, :]
diagonal = torch.eye(max_atoms, dtype=torch.bool)[None]


def distance_matrix(positions):
    dist = torch.cdist(positions, positions, p=2).clone()
    dist[pair_is_padding] = 0.0
    return dist


def repulsive_energy(positions, alpha=1.3, r0=1.1):
    dist = distance_matrix(positions)
    real_pair = ~(pair_is_padding | diagonal)
    safe = torch.where(real_pair, dist, torch.ones_like(dist))
    pair_energy = torch.where(real_pair, torch.exp(-alpha * (safe - r0)), torch.zeros_like(dist))
    return 0.5 * pair_energy.sum(dim=(1, 2))


energy = repulsive_energy(positions)
forces = -torch.autograd.grad(energy.sum(), positions)[0]

result = {"energy": energy.detach(), "forces": forces}
