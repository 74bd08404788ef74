# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 24
# trigger: a check of the reparameterisation trick takes torch.autograd.functional.jacobian(strict=True)
#   of a helper that draws from torch.distributions.Normal(loc, scale) with .sample(), which draws
#   without a graph, instead of .rsample()
# source: none found; the pattern as users write it (sample() where rsample() is meant)
# results: jacobian
import os
import sys

import torch
from torch.autograd.functional import jacobian
from torch.distributions import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class GaussianHead:
    def __init__(self, log_scale):
        self.log_scale = log_scale

    def draw(self, loc):
        return Normal(loc, self.log_scale.exp()).sample()  # PRIMARY


torch.manual_seed(0)
head = GaussianHead(torch.tensor([-1.0, 0.5, 0.0]))
loc = torch.tensor([0.2, -0.3, 1.0])
jacobian = jacobian(head.draw, loc, strict=True)
