"""torch.func.jvp of a model along the first input coordinate, the direction made with one_hot,
which returns integers: a tangent must be floating point. The pattern as users write it
(derivatives along a basis vector)."""
import torch
from torch.func import jvp

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
batch = torch.randn(4, 3)
direction = torch.nn.functional.one_hot(torch.zeros(4, dtype=torch.long), num_classes=3)

out, directional = jvp(model, (batch,), (direction,))  # PRIMARY
