# message: You tried to vmap over SoftQuantize, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 24
# helpers: lib_soft_quant24.py
# trigger: a learned image codec's rate-distortion analysis takes the Jacobian of the quantised latent
#   with respect to the latent by torch.func.jacfwd (forward mode, as the latent is small); the soft
#   quantiser in a library module has setup_context, backward and jvp, but jacfwd maps its jvp with
#   vmap, and the Function has no vmap rule
# source: none found; the pattern as users write it (jacfwd of a custom Function that has a jvp)
# results: jacobian
import os
import sys

import torch
from torch import nn
from torch.func import jacfwd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_soft_quant24 import SoftQuantize  # noqa: E402


class Codec(nn.Module):
    def __init__(self):
        super().__init__()
        self.analysis = nn.Linear(4, 3)

    def quantised_latent(self, latent):
        return SoftQuantize.apply(latent * 4.0)


torch.manual_seed(0)
codec = Codec()
latent = codec.analysis(torch.randn(4)).detach()
jacobian = jacfwd(codec.quantised_latent)(latent)
