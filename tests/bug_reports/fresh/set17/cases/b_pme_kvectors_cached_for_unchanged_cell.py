"""Fitting per-species partial charges to reference energies and stresses with a reciprocal-space
(Ewald/PME-style) electrostatics calculator. The calculator caches its k-vectors: when it is
called again with a cell equal to the last one, it returns the k-vectors it computed then. The
cell requires grad (the stress is the energy's derivative with respect to it), so the cached
k-vectors carry the first call's graph; the first `loss.backward()` frees it, and the second
training step, same cell, raises "Trying to backward through the graph a second time (or
directly access saved tensors after they have already been freed)".
Source: https://github.com/lab-cosmo/torch-pme/issues/62 ("Caching destroys computational
graph": reusing a calculator for a second backward with an unchanged cell fails; the fix stops
reusing the cached k-vectors and computes them from the cell at each call).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

N_ATOMS, N_MAX, SMEARING = 12, 2, 0.6


class KSpaceEnergy(nn.Module):
    def __init__(self):
        super().__init__()
        grid = torch.arange(-N_MAX, N_MAX + 1, dtype=torch.float32)
        ints = torch.cartesian_prod(grid, grid, grid)
        self.register_buffer("ints", ints[(ints != 0).any(dim=1)])
        self._cached_cell = None
        self._cached_kvectors = None

    def kvectors(self, cell):
        if self._cached_cell is not None and torch.equal(cell, self._cached_cell):
            return self._cached_kvectors
        reciprocal = 2 * math.pi * torch.linalg.inv(cell).T
        kvectors = self.ints @ reciprocal
        self._cached_cell = cell.detach().clone()
        self._cached_kvectors = kvectors
        return kvectors

    def forward(self, positions, charges, cell):
        k = self.kvectors(cell)
        k_sq = (k ** 2).sum(dim=1)
        kernel = torch.exp(-0.5 * SMEARING ** 2 * k_sq) / k_sq
        phase = positions @ k.T
        s_re = (charges[:, None] * torch.cos(phase)).sum(dim=0)
        s_im = (charges[:, None] * torch.sin(phase)).sum(dim=0)
        return 2 * math.pi * (kernel * (s_re ** 2 + s_im ** 2)).sum() / torch.det(cell)


species = torch.randint(0, 2, (N_ATOMS,))
charge_per_species = nn.Parameter(torch.tensor([0.5, -0.5]))
cell = (4.0 * torch.eye(3) + 0.1 * torch.randn(3, 3)).requires_grad_()
calculator = KSpaceEnergy()
optimizer = torch.optim.Adam([charge_per_species], lr=0.05)
frames = [torch.rand(N_ATOMS, 3) @ cell.detach() for _ in range(3)]
reference = [(torch.tensor(-0.3 * i), torch.full((3, 3), 0.01 * i)) for i in range(3)]

losses = []
for step in range(3):
    for positions, (ref_energy, ref_stress) in zip(frames, reference):
        charges = charge_per_species[species]
        energy = calculator(positions, charges, cell)
        stress = torch.autograd.grad(energy, cell, create_graph=True)[0]
        loss = (energy - ref_energy) ** 2 + ((stress - ref_stress) ** 2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "charges": charge_per_species.detach().clone()}
