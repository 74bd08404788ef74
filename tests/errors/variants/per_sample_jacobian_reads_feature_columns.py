# message: too many indices for tensor of dimension 1
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 7
# trigger: per-sample Jacobians of a physics model with vmap(jacrev(f)); f was written for a batch
#   and reads the coordinates as columns (state[:, 0]), but under vmap it sees one sample
# source: none found; the pattern as users write it (torch.func per-sample Jacobians)
# results: jacobians
import torch
from torch.func import jacrev, vmap


def pendulum_energy(state):
    angle, velocity = state[:, 0], state[:, 1]  # PRIMARY
    return 0.5 * velocity ** 2 + (1 - torch.cos(angle))


torch.manual_seed(0)
states = torch.randn(4, 2)
jacobians = vmap(jacrev(pendulum_energy))(states)
