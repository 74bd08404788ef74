"""Molecular energy regression with a DimeNet-style radial basis: the Bessel layer keeps its
frequencies in a trainable `nn.Parameter` and fills it in `reset_parameters` with
`torch.arange(1, n + 1, out=self.freq).mul_(PI)`, a write into a leaf that requires grad (older
PyTorch said "a leaf Variable that requires grad is being used in an in-place operation"; today
`arange` refuses the `out=` that requires grad).
Source: https://github.com/XieResearchGroup/Physics-aware-Multiplex-GNN/issues/4 (answer: take the
newer PyG DimeNet code, which fills the parameter under `torch.no_grad()` and then calls
`self.freq.requires_grad_()`).
expect: raises"""
import math

import torch
import torch.nn as nn

PI = math.pi
torch.manual_seed(0)


class BesselBasis(nn.Module):
    def __init__(self, num_radial, cutoff=5.0):
        super().__init__()
        self.cutoff = cutoff
        self.freq = nn.Parameter(torch.empty(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)
        # The out= write under no_grad leaves freq with requires_grad=False (it stays an
        # nn.Parameter, so the optimizer holds it but never moves it): turn it back on, as PyG's
        # DimeNet does, so the frequencies train as in the reported model.
        self.freq.requires_grad_()

    def forward(self, dist):
        d = (dist / self.cutoff).unsqueeze(-1)
        return torch.sin(self.freq * d) / d


class EnergyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rbf = BesselBasis(6)
        self.mlp = nn.Sequential(nn.Linear(6, 16), nn.SiLU(), nn.Linear(16, 1))

    def forward(self, dist, edge_to_mol, n_mols):
        edge_energy = self.mlp(self.rbf(dist)).squeeze(-1)
        return torch.zeros(n_mols).index_add(0, edge_to_mol, edge_energy)


model = EnergyModel()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
dist = torch.rand(30) * 4 + 0.5
edge_to_mol = torch.randint(0, 5, (30,))
energy = torch.randn(5)
losses = []
for step in range(4):
    loss = ((model(dist, edge_to_mol, 5) - energy) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
