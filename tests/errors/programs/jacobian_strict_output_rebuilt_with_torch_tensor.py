"""torch.autograd.functional.jacobian(..., strict=True) of a function that builds its output vector
with torch.tensor([...]) of computed elements, which copies their values into a new tensor without
their graph; strict mode refuses an output independent of the input (without strict the Jacobian is
silently zero). The pattern as users write it (torch.tensor of tensors, PyTorch's "To copy construct
from a tensor" warning)."""
import torch
from torch.autograd.functional import jacobian

point = torch.tensor([1.0, 2.0])


def polar(p):
    radius = p.pow(2).sum().sqrt()
    angle = torch.atan2(p[1], p[0])
    return torch.tensor([radius, angle])  # PRIMARY


J = jacobian(polar, point, strict=True)  # RAISES
