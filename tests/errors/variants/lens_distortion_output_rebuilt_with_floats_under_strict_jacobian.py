# message: Output 0 of the user-provided function does not require gradients. The outputs must be computed
#   in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 18
# trigger: a lens-distortion model's method returns torch.tensor([float(xd), float(yd)]) (each
#   coordinate turned into a Python float "for a clean dtype"); a calibration routine takes its
#   Jacobian with torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it
# results: jac
import os
import sys

import torch
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class RadialDistortion:
    def __init__(self, k1, k2):
        self.k1, self.k2 = k1, k2

    def distort(self, point):
        r2 = point.pow(2).sum()
        factor = 1 + self.k1 * r2 + self.k2 * r2 ** 2
        xd, yd = point[0] * factor, point[1] * factor
        return torch.tensor([float(xd), float(yd)])  # PRIMARY


lens = RadialDistortion(0.1, 0.01)
jac = jacobian(lens.distort, torch.tensor([0.3, -0.2]), strict=True)
