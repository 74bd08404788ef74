"""A learned bias potential on collective variables for enhanced-sampling molecular dynamics. The
bias network sees the dihedral angles of a chain (computed from the atom positions) and the
integrator gets the forces by back-propagating the bias energy to the positions. The module
returns one energy per dihedral instead of the total energy, so `energy.backward()` raises "grad
can be implicitly created only for scalar outputs".
Source: https://github.com/openmm/openmm-torch/issues/119 ("apply force on only several atoms or
CVs": a TorchForce whose network maps atom coordinates to dihedrals and then to an energy fails in
the minimizer with "grad can be implicitly created only for scalar outputs").
expect: raises"""
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
        return self.net(features).squeeze(-1)


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
