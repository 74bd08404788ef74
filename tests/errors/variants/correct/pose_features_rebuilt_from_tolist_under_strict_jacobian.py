# message: Output 0 of the user-provided function does not require gradients. The outputs must be computed
#   in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 17
# trigger: a pose-feature method of a class computes its features as a tensor, then rebuilds it with
#   torch.tensor(features.tolist()) "to get a clean float32 vector" (a copy without the graph); a
#   calibration step takes its Jacobian with torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it (tolist() round trip kept from logging code)
# results: J
import torch
from torch.autograd.functional import jacobian


class PoseFeatures:
    def __init__(self, link_lengths):
        self.link_lengths = link_lengths

    def __call__(self, angles):
        cumulative = angles.cumsum(0)
        x = (self.link_lengths * cumulative.cos()).sum()
        y = (self.link_lengths * cumulative.sin()).sum()
        features = torch.stack([x, y, cumulative[-1]])
        return features  # PRIMARY


features = PoseFeatures(torch.tensor([1.0, 0.8, 0.5]))
angles = torch.tensor([0.3, -0.2, 0.6])
J = jacobian(features, angles, strict=True)
