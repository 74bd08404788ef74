# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 18
# trigger: the Hessian of a potential energy is taken with torch.func.hessian (jacfwd over jacrev,
#   forward mode on the outside); the energy's soft barrier is a custom Function with setup_context,
#   generate_vmap_rule = True and backward, but no jvp, in a library module (lib_barrier.py)
# source: none found; the pattern as users write it (a Newton step of a small relaxation)
# helpers: lib_barrier.py
# results: h
import os
import sys

import torch
from torch.func import hessian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_barrier import SoftBarrier  # noqa: E402


def energy(x):
    return (x ** 2).sum() + SoftBarrier.apply(x).sum()


h = hessian(energy)(torch.tensor([0.5, -0.25, 1.0]))
