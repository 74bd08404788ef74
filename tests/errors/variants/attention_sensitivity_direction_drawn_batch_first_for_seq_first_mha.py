# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [5, 3, 4] while the given forward gradient is of size
#   [3, 5, 4].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 25
# trigger: a directional sensitivity of an attention-pooling model built on nn.MultiheadAttention
#   (batch_first=False, so (steps, batch, dim)) with torch.func.jvp; the direction is drawn in the
#   batch-first layout (batch, steps, dim) of the rest of the pipeline
# source: none found; the pattern as users write it (batch_first mismatches of nn.MultiheadAttention)
# results: sensitivities
import os
import sys

import torch
from torch import nn
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class AttentionPool(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.attention = nn.MultiheadAttention(dim, num_heads=2)
        self.out = nn.Linear(dim, 1)

    def forward(self, sequence):
        attended, _ = self.attention(sequence, sequence, sequence)
        return self.out(attended.mean(0)).squeeze(-1)


def directional_sensitivity(model, sequence, direction):
    """The change of every prediction along `direction`, by forward-mode differentiation."""
    _, tangent = jvp(model, (sequence,), (direction,))
    return tangent


torch.manual_seed(0)
model = AttentionPool()
steps, batch, dim = 5, 3, 4
sequence = torch.randn(steps, batch, dim)
direction = torch.randn(batch, steps, dim)  # PRIMARY
sensitivities = directional_sensitivity(model, sequence, direction)
