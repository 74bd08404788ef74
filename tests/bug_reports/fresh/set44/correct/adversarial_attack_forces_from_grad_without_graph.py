"""Adversarial sampling of a neural-network force field: an ensemble of energy models, each
returning the energy and its gradient (the forces) computed inside the model with
`torch.autograd.grad`. The attack perturbs the positions to maximise the ensemble's force
uncertainty weighted by a Boltzmann factor of the mean energy, and `loss.backward()` stops at the
first step: "Trying to backward through the graph a second time, but the buffers have already been
freed". The maintainer's answer: the forces are computed without keeping the graph; the force
field of the repository (NFF's `compute_grad`) passes `create_graph=True, retain_graph=True` to
`torch.autograd.grad` ("That did it!").
Source: https://github.com/learningmatter-mit/Atomistic-Adversarial-Attacks/issues/1
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class PairPotential(nn.Module):
    def __init__(self, n_hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, n_hidden), nn.Tanh(), nn.Linear(n_hidden, 1))

    def forward(self, xyz):
        i, j = torch.triu_indices(xyz.shape[0], xyz.shape[0], offset=1)
        distances = (xyz[i] - xyz[j]).norm(dim=-1, keepdim=True)
        energy = self.net(distances).sum()
        energy_grad = torch.autograd.grad(energy, xyz, grad_outputs=torch.ones_like(energy),
                                          create_graph=True, retain_graph=True)[0]
        return {"energy": energy, "energy_grad": energy_grad}


class AdvLoss:
    def __init__(self, kT=1.0):
        self.kT = kT

    def __call__(self, results):
        energies = torch.stack([r["energy"] for r in results])
        forces = torch.stack([-r["energy_grad"] for r in results])
        uncertainty = forces.var(dim=0).mean()
        boltzmann = torch.exp(-energies.mean() / self.kT)
        return -uncertainty * boltzmann


class Attacker:
    def __init__(self, models, xyz, lr=0.01):
        self.models = models
        self.xyz = xyz
        self.delta = torch.zeros_like(xyz, requires_grad=True)
        self.optimizer = torch.optim.Adam([self.delta], lr=lr)
        self.loss_fn = AdvLoss()

    def step(self):
        self.optimizer.zero_grad()
        xyz = self.xyz + self.delta
        results = [model(xyz) for model in self.models]
        loss = self.loss_fn(results)
        loss.backward()
        self.optimizer.step()
        return loss.item()


models = [PairPotential() for _ in range(3)]
for model in models:
    model.requires_grad_(False)
positions = torch.randn(6, 3) * 1.5
attacker = Attacker(models, positions)
losses = [attacker.step() for _ in range(5)]

result = {"losses": torch.tensor(losses), "delta": attacker.delta.detach().clone()}
