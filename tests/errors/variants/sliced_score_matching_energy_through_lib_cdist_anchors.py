# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# set: 29
# trigger: an energy-based model in another file measures the distance of each point to learned
#   anchors with torch.cdist; it is trained by sliced score matching: the score -dE/dx comes from
#   torch.autograd.grad(create_graph=True) and the loss projects its Jacobian on random directions
#   with a second torch.autograd.grad, which needs the derivative of cdist's backward
# source: none found; the pattern as users write it (sliced score matching of an energy model)
# helpers: lib_energy29.py
# results: losses, energy
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_energy29 import AnchorEnergy  # noqa: E402


def sliced_score_matching(energy, x, projections=2):
    x = x.requires_grad_(True)
    score = -torch.autograd.grad(energy(x).sum(), x, create_graph=True)[0]
    loss = 0.0
    for _ in range(projections):
        v = torch.randn_like(x)
        projected = (score * v).sum()
        jacobian_v = torch.autograd.grad(projected, x, create_graph=True)[0]
        loss = loss + (jacobian_v * v).sum(1).mean() + 0.5 * (score * v).sum(1).pow(2).mean()
    return loss / projections


torch.manual_seed(0)
energy = AnchorEnergy()
optimizer = torch.optim.Adam(energy.parameters(), lr=0.01)
losses = []
for step in range(3):
    data = torch.randn(16, 2) + 3.0
    optimizer.zero_grad()
    loss = sliced_score_matching(energy, data)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
