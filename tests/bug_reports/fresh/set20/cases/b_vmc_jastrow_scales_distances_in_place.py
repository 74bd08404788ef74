"""Variational Monte Carlo for two electrons in a harmonic trap: the trial wave function is a
Gaussian times a Pade-Jastrow factor of the electron-electron distance, the local energy needs the
Laplacian of the wave function (autograd with `create_graph=True`), and the variational parameters
are trained on the mean local energy over a fixed set of walkers. The Jastrow factor scales the
distances in place (`r12 /= self.length_scale`) right after `norm()`, which keeps its result for
its backward; the first derivative of the wave function then raises "one of the variables needed
for gradient computation has been modified by an inplace operation".
Source: https://github.com/NLESC-JCER/QMCTorch/issues/30 ("Backpropagation error, gradient
computation has been modified by inplace operation" when the energy gradient is computed by
autograd; fixed in https://github.com/NLESC-JCER/QMCTorch/pull/33, "the jastrow had a bunch of
inplace operation that prevented the automatic calculation of the energy gradient").
expect: raises"""
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
        r12 /= self.length_scale
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
