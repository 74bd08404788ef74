# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 13
# trigger: a continuous normalising flow's divergence is estimated with Hutchinson's trick through
#   torch.func.jvp, the Rademacher probe drawn as torch.randint(0, 2, shape) * 2 - 1, which is int64
# source: none found; the pattern as users write it (Rademacher probes from randint)
# results: divergence
import torch
from torch import nn
from torch.func import jvp


class VectorField(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 3))

    def forward(self, z):
        return self.net(z)


def hutchinson_divergence(field, z):
    probe = torch.randint(0, 2, z.shape) * 2 - 1
    _, directional = jvp(field, (z,), (probe.to(z.dtype),))  # PRIMARY
    return (probe * directional).sum(dim=1)


torch.manual_seed(0)
field = VectorField()
z = torch.randn(4, 3)
divergence = hutchinson_divergence(field, z)
