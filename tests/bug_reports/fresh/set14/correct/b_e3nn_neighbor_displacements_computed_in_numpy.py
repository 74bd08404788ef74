"""An interatomic potential trained on energies and forces, with the neighbour list's edge
vectors computed in torch from the positions (`pos[second] - pos[first] + shifts @ cell`), so
that the forces are the energy's derivative.
Source: https://github.com/e3nn/e3nn/pull/164."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

N_ATOMS, R_MAX = 6, 2.5


def neighbor_list_and_relative_vec(pos, r_max, cell):
    """Pairs (i, j) closer than r_max, with the displacement r_j - r_i + shift @ cell."""
    positions = pos.detach().numpy()
    first_index, second_index, shifts = [], [], []
    for i in range(len(positions)):
        for j in range(len(positions)):
            for shift in ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)):
                if i == j and shift == (0.0, 0.0, 0.0):
                    continue
                vec = positions[j] - positions[i] + np.array(shift) @ cell
                if np.linalg.norm(vec) < r_max:
                    first_index.append(i)
                    second_index.append(j)
                    shifts.append(shift)
    edge_index = torch.tensor([first_index, second_index], dtype=torch.long)
    displacements = pos[second_index] - pos[first_index]
    edge_attr = displacements + torch.as_tensor(np.array(shifts) @ cell, dtype=pos.dtype)
    return edge_index, edge_attr


class PairPotential(nn.Module):
    """Energy = sum over edges of a learned radial function, pooled per atom."""

    def __init__(self):
        super().__init__()
        self.radial = nn.Sequential(nn.Linear(1, 16), nn.SiLU(), nn.Linear(16, 1))

    def forward(self, pos, cell):
        edge_index, edge_vec = neighbor_list_and_relative_vec(pos, R_MAX, cell)
        lengths = edge_vec.norm(dim=-1, keepdim=True)
        pair_energy = self.radial(lengths).squeeze(-1) * torch.cos(torch.pi * lengths.squeeze(-1) / (2 * R_MAX))
        return 0.5 * pair_energy.sum()


cell = np.diag([4.0, 10.0, 10.0])
reference_pos = torch.rand(N_ATOMS, 3) * torch.tensor([4.0, 2.0, 2.0])
true_energy = torch.tensor(-1.5)
true_forces = 0.1 * torch.randn(N_ATOMS, 3)
model = PairPotential()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(4):
    optimizer.zero_grad()
    pos = reference_pos.clone().requires_grad_(True)
    energy = model(pos, cell)
    forces = -torch.autograd.grad(energy, pos, create_graph=True)[0]
    loss = (energy - true_energy) ** 2 + ((forces - true_forces) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
