"""The correct version of jvp_integer_tangent: the one-hot direction made floating point."""
import torch
from torch.func import jvp

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
batch = torch.randn(4, 3)
direction = torch.nn.functional.one_hot(torch.zeros(4, dtype=torch.long), num_classes=3).float()

out, directional = jvp(model, (batch,), (direction,))
