"""Fitting periodic torsion force constants to reference energies with the per-conformation energy
batched by `torch.func.vmap`; the per-atom energies are accumulated with the out-of-place
`scatter_add`, which vmap can batch.
Source: https://github.com/torchmd/torchmd/pull/71."""
import math

import torch
from torch.func import vmap

torch.manual_seed(0)

ATOMS, CONFORMATIONS = 6, 16
TORSIONS = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]])
PERIODICITY = torch.tensor([1.0, 2.0, 3.0])
PHASE = torch.tensor([0.0, math.pi, 0.0])


def dihedral(positions, torsions):
    p0, p1, p2, p3 = (positions[torsions[:, k]] for k in range(4))
    b0, b1, b2 = p0 - p1, p2 - p1, p3 - p2
    b1_unit = b1 / b1.norm(dim=-1, keepdim=True)
    v = b0 - (b0 * b1_unit).sum(-1, keepdim=True) * b1_unit
    w = b2 - (b2 * b1_unit).sum(-1, keepdim=True) * b1_unit
    x = (v * w).sum(-1)
    y = (torch.cross(b1_unit, v, dim=-1) * w).sum(-1)
    return torch.atan2(y, x)


def torsion_energy(positions, force_constants):
    phi = dihedral(positions, TORSIONS)
    energies = force_constants * (1.0 + torch.cos(PERIODICITY * phi - PHASE))
    per_atom = torch.zeros(ATOMS).scatter_add(0, TORSIONS[:, 0], energies)
    return per_atom.sum()


conformations = torch.randn(CONFORMATIONS, ATOMS, 3) + torch.arange(ATOMS).float()[:, None] * 1.2
true_constants = torch.tensor([0.8, 1.5, 0.3])
reference = torch.stack([torsion_energy(c, true_constants) for c in conformations]).detach()

force_constants = torch.ones(3, requires_grad=True)
optimizer = torch.optim.Adam([force_constants], lr=0.05)
losses = []
for step in range(30):
    predicted = vmap(torsion_energy, in_dims=(0, None))(conformations, force_constants)
    loss = ((predicted - reference) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "force_constants": force_constants.detach().clone()}
