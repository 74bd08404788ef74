"""Force matching for particles in the field of fixed sources, with the distances computed by
`torch.cdist(..., compute_mode="use_mm_for_euclid_dist")`, whose backward is itself
differentiable, so the loss on the forces trains the network.
Source: https://github.com/pytorch/pytorch/issues/83510."""
import torch
import torch.nn as nn

torch.manual_seed(0)

PARTICLES, SOURCES = 8, 5

sources = torch.randn(SOURCES, 3) * 3.0
field = nn.Sequential(nn.Linear(SOURCES, 32), nn.Tanh(), nn.Linear(32, 1))
reference_field = nn.Sequential(nn.Linear(SOURCES, 32), nn.Tanh(), nn.Linear(32, 1))


def forces_of(network, positions):
    positions = positions.requires_grad_(True)
    distances = torch.cdist(positions, sources, compute_mode="use_mm_for_euclid_dist")
    energy = network(distances).sum()
    (gradient,) = torch.autograd.grad(energy, positions, create_graph=True)
    return -gradient


optimizer = torch.optim.Adam(field.parameters(), lr=1e-2)
losses = []
for step in range(15):
    positions = torch.randn(PARTICLES, 3)
    target_forces = forces_of(reference_field, positions.clone()).detach()
    predicted_forces = forces_of(field, positions)
    loss = ((predicted_forces - target_forces) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in field.parameters()]}
