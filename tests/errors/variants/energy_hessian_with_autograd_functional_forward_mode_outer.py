# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 28
# trigger: a structure relaxer takes the stiffness (the Hessian of its energy) with
#   torch.autograd.functional.hessian(..., vectorize=True, outer_jacobian_strategy="forward-mode"), the
#   faster strategy its docs suggest; the pair energy goes through a soft-repulsion Function in another
#   file written with setup_context, generate_vmap_rule and backward, but no jvp
# source: none found; the pattern as users write it (torch.autograd.functional's forward-over-reverse Hessian)
# helpers: lib_repulsion28.py
# results: stiffness, step
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_repulsion28 import SoftRepulsion  # noqa: E402


class Relaxer:
    def __init__(self, anchors):
        self.anchors = anchors

    def energy(self, position):
        distance = (position - self.anchors).pow(2).sum(1).add(1e-6).sqrt()
        return SoftRepulsion.apply(distance).sum() + 0.1 * position.pow(2).sum()

    def stiffness(self, position):
        return torch.autograd.functional.hessian(self.energy, position, vectorize=True,
                                                 outer_jacobian_strategy="forward-mode")

    def newton_step(self, position):
        gradient = torch.autograd.functional.jacobian(self.energy, position)
        hess = self.stiffness(position)
        return torch.linalg.solve(hess, gradient)


torch.manual_seed(0)
relaxer = Relaxer(torch.randn(4, 2))
position = torch.tensor([0.3, -0.2])
stiffness = relaxer.stiffness(position)
step = relaxer.newton_step(position)
