"""Force matching for particles in the field of fixed sources: a small network maps each particle's
distances to the sources (`torch.cdist(positions, sources)`) to an energy, the forces are its
negative gradient with respect to the positions (`create_graph=True`), and the loss compares them
with reference forces. Training needs the derivative of the force, a second derivative through
`cdist`, and for small inputs cdist's default path computes the distances directly, whose backward
has no derivative: `loss.backward()` raises "the derivative for '_cdist_backward' is not
implemented".
Source: https://github.com/pytorch/pytorch/issues/83510 ("Cdist backward dependent on compute_mode":
a loss on the gradient of a network of `torch.cdist(a, b)` raises NotImplementedError for the
default compute_mode; `compute_mode="use_mm_for_euclid_dist"` works).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

PARTICLES, SOURCES = 8, 5

sources = torch.randn(SOURCES, 3) * 3.0
field = nn.Sequential(nn.Linear(SOURCES, 32), nn.Tanh(), nn.Linear(32, 1))
reference_field = nn.Sequential(nn.Linear(SOURCES, 32), nn.Tanh(), nn.Linear(32, 1))


def forces_of(network, positions):
    positions = positions.requires_grad_(True)
    distances = torch.cdist(positions, sources)
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
