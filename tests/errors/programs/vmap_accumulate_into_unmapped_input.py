"""A running offset added in place to an argument vmap does not map (in_dims=None): the argument
has no batch dimension, so the in-place add cannot hold the batched result. Seen while writing set
11 of the held-out variants (docs/errors.md)."""
import torch
from torch.func import vmap


def shifted(x, offset):
    offset += 2 * x  # PRIMARY
    return offset.tanh()


xs = torch.tensor([[0.5, -1.0], [2.0, 0.0], [1.0, 1.5], [-0.5, 3.0], [0.25, -2.0], [1.0, 0.0]])
start = torch.tensor([0.1, -0.2])
out = vmap(shifted, in_dims=(0, None))(xs, start)
