# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 13
# trigger: a feature encoder's method builds its output vector with p.new_tensor([...]) of computed
#   values (a copy without their graph); a sensitivity helper takes its Jacobian with
#   torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it (new_tensor to keep the input's dtype and device)
# results: J
import torch
from torch.autograd.functional import jacobian


class PolarEncoder:
    def __init__(self, scale):
        self.scale = scale

    def encode(self, p):
        radius = self.scale * p.pow(2).sum().sqrt()
        angle = torch.atan2(p[1], p[0])
        return torch.stack([radius, angle, radius * angle])  # PRIMARY


def sensitivity(encoder, point):
    return jacobian(encoder.encode, point, strict=True)


encoder = PolarEncoder(scale=2.0)
J = sensitivity(encoder, torch.tensor([1.0, 2.0]))
