"""A batch of small molecules padded to the same number of atoms, with a tight-binding style
repulsive energy computed from the interatomic distance matrix. The geometry's distance matrix
comes from `torch.cdist` and the padding rows/columns are then zeroed in place
(`dist[padding] = 0`). cdist keeps its output for backward, so computing forces as the gradient of
the energy with respect to the positions fails: "one of the variables needed for gradient
computation has been modified by an inplace operation".
Source: https://github.com/tbmalt/tbmalt/pull/76 ("Make energy differentiable wrt positions by
cloning the distance matrix before masking": the distance matrix is cloned before the padding is
zeroed, so forces can be computed with torch.autograd.grad).
expect: raises"""
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
    dist = torch.cdist(positions, positions, p=2)
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
