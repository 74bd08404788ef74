"""Variational Monte Carlo for two electrons in a harmonic trap whose Pade-Jastrow factor scales
the electron-electron distance out of place (`r12 = r12 / self.length_scale`), so the autograd
Laplacian and the energy gradient are computed.
Source: https://github.com/NLESC-JCER/QMCTorch/pull/33."""
import torch
import torch.nn as nn

torch.manual_seed(0)

WALKERS = 64


class PadeJastrow(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor(0.3, dtype=torch.float64))
        self.length_scale = 2.0

    def forward(self, positions):
        r12 = (positions[:, 0] - positions[:, 1]).norm(dim=-1)
        r12 = r12 / self.length_scale
        return torch.exp(0.5 * r12 / (1.0 + self.weight * r12))


class TrialWaveFunction(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(0.8, dtype=torch.float64))
        self.jastrow = PadeJastrow()

    def forward(self, positions):
        gaussian = torch.exp(-0.5 * self.alpha * (positions ** 2).sum(dim=(1, 2)))
        return gaussian * self.jastrow(positions)


def local_energy(wave_function, positions):
    positions = positions.clone().requires_grad_(True)
    psi = wave_function(positions)
    (gradient,) = torch.autograd.grad(psi.sum(), positions, create_graph=True)
    laplacian = torch.zeros_like(psi)
    flat_gradient = gradient.reshape(WALKERS, -1)
    for k in range(flat_gradient.shape[1]):
        (second,) = torch.autograd.grad(flat_gradient[:, k].sum(), positions, create_graph=True)
        laplacian = laplacian + second.reshape(WALKERS, -1)[:, k]
    kinetic = -0.5 * laplacian / psi
    trap = 0.5 * (positions ** 2).sum(dim=(1, 2))
    repulsion = 1.0 / (positions[:, 0] - positions[:, 1]).norm(dim=-1)
    return kinetic + trap + repulsion


walkers = torch.randn(WALKERS, 2, 3, dtype=torch.float64)
wave_function = TrialWaveFunction()
optimizer = torch.optim.Adam(wave_function.parameters(), lr=0.02)
energies = []
for step in range(10):
    energy = local_energy(wave_function, walkers).mean()
    optimizer.zero_grad()
    energy.backward()
    optimizer.step()
    energies.append(energy.detach())

result = {"energies": torch.stack(energies),
          "params": [p.detach().clone() for p in wave_function.parameters()]}
