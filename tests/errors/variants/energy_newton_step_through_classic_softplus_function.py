# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it
#   must override the setup_context staticmethod.
# code: AD231 (catalogue: function_without_setup_context)
# helpers: lib_pair_energy.py
# set: 17
# trigger: a particle relaxation takes Newton steps with the Hessian as torch.func.jacrev(torch.func.grad(...)) of an
#   energy whose barrier term is a classic forward(ctx, x) Function in a library module
#   (lib_pair_energy.py), called from a class's relax() method
# source: none found; the pattern as users write it (an old hand-written Function reused under torch.func)
# results: relaxed
import os
import sys

import torch
from torch.func import grad, jacrev

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_pair_energy import barrier_energy  # noqa: E402


class Relaxation:
    def __init__(self, weights, stiffness=1.0):
        self.weights = weights
        self.stiffness = stiffness

    def energy(self, flat):
        positions = flat.view(-1, 2)
        return barrier_energy(positions, self.weights) + 0.5 * self.stiffness * flat.pow(2).sum()

    def relax(self, flat, steps=3):
        for _ in range(steps):
            g = grad(self.energy)(flat)
            h = jacrev(grad(self.energy))(flat)
            flat = flat - torch.linalg.solve(h, g)
        return flat


torch.manual_seed(0)
relaxation = Relaxation(torch.randn(2, 3))
relaxed = relaxation.relax(torch.randn(8))
