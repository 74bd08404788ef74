"""Learning a pair potential through a molecular-dynamics simulation (differentiable MD). The MD
calculator evaluates the potential (energy, and forces as the negative gradient of the energy with
`create_graph=True`) and then copies the requested properties into the simulated system inside a
gradient context chosen in `__init__`: `no_grad` when no gradients are needed, a null context when
they are. The two branches are swapped, so with `gradients_required=True` the forces are written
into the system under `no_grad`; the integrated positions never depend on the potential's
parameters and `loss.backward()` fails ("element 0 of tensors does not require grad and does not
have a grad_fn"), several calls away from the line that caused it.
Source: https://github.com/atomistic-machine-learning/schnetpack/pull/419 (merged, "Fixed inverted
grad context for calculator": `if gradients_required: self.grad_context = nullcontext()` else
`torch.no_grad()`)
expect: raises"""
from contextlib import nullcontext

import torch
import torch.nn as nn

torch.manual_seed(0)

N_ATOMS, N_STEPS, DT = 4, 15, 0.02


class MorsePotential(nn.Module):
    def __init__(self, epsilon=1.0, r0=1.1, a=1.5):
        super().__init__()
        self.log_epsilon = nn.Parameter(torch.tensor(epsilon).log())
        self.log_r0 = nn.Parameter(torch.tensor(r0).log())
        self.a = a

    def forward(self, positions):
        if not positions.requires_grad:
            positions = positions.detach().requires_grad_()
        i, j = torch.triu_indices(N_ATOMS, N_ATOMS, 1)
        r = (positions[i] - positions[j]).norm(dim=-1)
        energy = (self.log_epsilon.exp() * (1 - torch.exp(-self.a * (r - self.log_r0.exp()))) ** 2).sum()
        forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
        return {"energy": energy, "forces": forces}


class System:
    def __init__(self, positions, velocities, masses):
        self.positions, self.velocities, self.masses = positions, velocities, masses
        self.properties = {}


class MDCalculator:
    def __init__(self, model, required_properties=("energy", "forces"), gradients_required=False,
                 energy_conversion=1.0, position_conversion=1.0):
        self.model = model
        self.required_properties = list(required_properties)
        self.property_conversion = {"energy": energy_conversion,
                                    "forces": energy_conversion / position_conversion}
        self.results = {}
        # set up gradient context for passing results
        if gradients_required:
            self.grad_context = torch.no_grad()
        else:
            self.grad_context = nullcontext()

    def calculate(self, system):
        self.results = self.model(system.positions)
        self._update_system(system)

    def _update_system(self, system):
        with self.grad_context:
            for p in self.required_properties:
                system.properties[p] = self.results[p] * self.property_conversion[p]


class VelocityVerlet:
    def __init__(self, time_step):
        self.time_step = time_step

    def step(self, system, calculator):
        dt = self.time_step
        system.velocities = system.velocities + 0.5 * dt * system.properties["forces"] / system.masses
        system.positions = system.positions + dt * system.velocities
        calculator.calculate(system)
        system.velocities = system.velocities + 0.5 * dt * system.properties["forces"] / system.masses


def simulate(calculator, positions, velocities, masses):
    system = System(positions.clone(), velocities.clone(), masses)
    calculator.calculate(system)
    integrator = VelocityVerlet(DT)
    trajectory = []
    for _ in range(N_STEPS):
        integrator.step(system, calculator)
        trajectory.append(system.positions)
    return torch.stack(trajectory)


start = torch.tensor([[0.0, 0.0, 0.0], [1.2, 0.0, 0.0], [0.0, 1.3, 0.0], [0.0, 0.0, 1.1]])
start = start + 0.05 * torch.randn(N_ATOMS, 3)
velocities = 0.1 * torch.randn(N_ATOMS, 3)
masses = torch.ones(N_ATOMS, 1)

reference = simulate(MDCalculator(MorsePotential(epsilon=1.6, r0=1.0)), start, velocities, masses).detach()

model = MorsePotential()
calculator = MDCalculator(model, gradients_required=True)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for epoch in range(12):
    trajectory = simulate(calculator, start, velocities, masses)
    loss = ((trajectory - reference) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "log_epsilon": model.log_epsilon.detach().clone(),
          "log_r0": model.log_r0.detach().clone()}
