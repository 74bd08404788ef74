# message: Output 0 of the user-provided function does not require gradients. The outputs must be computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 30
# trigger: a two-link arm's end-effector pointing direction is normalised by a geometry helper in another
#   file that reads vector.data (vector.data / vector.data.norm()); the controller asks for the
#   direction's Jacobian with torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it (.data in a helper to "avoid the graph")
# helpers: lib_geometry30.py
# results: jacobians, angles
import os
import sys

import torch
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_geometry30 import unit_direction  # noqa: E402


class TwoLinkArm:
    def __init__(self, upper=1.0, lower=0.7):
        self.upper = upper
        self.lower = lower

    def wrist_to_tip(self, angles):
        total = angles[0] + angles[1]
        return torch.stack([self.lower * torch.cos(total), self.lower * torch.sin(total)])

    def pointing(self, angles):
        return unit_direction(self.wrist_to_tip(angles) + torch.tensor([0.2, 0.0]))


torch.manual_seed(0)
arm = TwoLinkArm()
angles = torch.tensor([0.3, 0.5])
jacobians = []
for _ in range(3):
    j = jacobian(arm.pointing, angles, strict=True)
    jacobians.append(j)
    angles = angles + 0.1 * j.sum(0)
