"""TorchANI's force training example (`examples/nnp_training_force.py`): an atomic neural network
potential predicts molecular energies from coordinates that require grad, the forces are
`-torch.autograd.grad(energies.sum(), coordinates, retain_graph=True)[0]`, and the loss adds a
force term to the energy term. The call keeps the graph for the later `backward()` but has no
`create_graph=True`, so the forces are plain numbers without a graph: the force term is a constant
in the loss, `backward()` runs, and the network is trained on the energies only (no error, no
warning).
Source: https://github.com/aiqm/torchani/pull/238 ("Create graph for force in force training").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

MOLECULES, ATOMS = 8, 4


class AtomicNetwork(nn.Module):
    """Per-atom energies from a radial descriptor (sum of Gaussian-smeared pair distances)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("centers", torch.linspace(0.5, 3.0, 8))
        self.net = nn.Sequential(nn.Linear(8, 16), nn.CELU(0.1), nn.Linear(16, 1))

    def forward(self, coordinates):
        difference = coordinates[:, :, None, :] - coordinates[:, None, :, :]
        distances = ((difference ** 2).sum(-1) + torch.eye(ATOMS) * 100.0).sqrt()
        descriptor = torch.exp(-4.0 * (distances[..., None] - self.centers) ** 2).sum(dim=2)
        return self.net(descriptor).squeeze(-1).sum(dim=-1)  # one energy per molecule


model = AtomicNetwork()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
coordinates_data = torch.randn(MOLECULES, ATOMS, 3)
true_energies = torch.randn(MOLECULES)
true_forces = 0.3 * torch.randn(MOLECULES, ATOMS, 3)
force_coefficient = 0.5
mse = nn.MSELoss()
losses = []
for step in range(6):
    optimizer.zero_grad()
    coordinates = coordinates_data.clone().requires_grad_(True)
    energies = model(coordinates)
    forces = -torch.autograd.grad(energies.sum(), coordinates, retain_graph=True)[0]
    energy_loss = mse(energies, true_energies)
    force_loss = mse(forces, true_forces)
    loss = energy_loss + force_coefficient * force_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
