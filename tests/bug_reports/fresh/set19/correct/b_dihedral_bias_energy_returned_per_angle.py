"""A learned dihedral bias potential that returns the total bias energy, whose gradient gives
the forces on the atoms.
Source: https://github.com/openmm/openmm-torch/issues/119."""
import torch
import torch.nn as nn

torch.manual_seed(0)

ATOMS, STEPS, DT = 7, 20, 0.01


def dihedrals(positions):
    b0 = positions[1:-2] - positions[:-3]
    b1 = positions[2:-1] - positions[1:-2]
    b2 = positions[3:] - positions[2:-1]
    n1 = torch.cross(b0, b1, dim=-1)
    n2 = torch.cross(b1, b2, dim=-1)
    m1 = torch.cross(n1, b1 / b1.norm(dim=-1, keepdim=True), dim=-1)
    return torch.atan2((m1 * n2).sum(-1), (n1 * n2).sum(-1))


class DihedralBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, positions):
        phi = dihedrals(positions)
        features = torch.stack([torch.cos(phi), torch.sin(phi)], dim=-1)
        return self.net(features).sum()


bias = DihedralBias()
positions = torch.cumsum(torch.randn(ATOMS, 3) * 0.5 + torch.tensor([1.0, 0.0, 0.0]), dim=0)
velocities = torch.zeros(ATOMS, 3)
energies = []
for step in range(STEPS):
    positions.requires_grad_(True)
    energy = bias(positions)
    energy.backward()
    forces = -positions.grad
    with torch.no_grad():
        velocities = velocities + DT * forces
        positions = positions.detach() + DT * velocities
    energies.append(energy.detach().sum())

result = {"energies": torch.stack(energies), "positions": positions.detach()}
