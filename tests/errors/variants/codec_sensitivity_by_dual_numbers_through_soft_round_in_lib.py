# message: You must implement the jvp function for custom autograd.Function to use it with forward mode
#   AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 23
# helpers: lib_quantiser23.py
# trigger: a learned codec quantises its latent with a soft-rounding Function (setup_context and
#   backward, no jvp) from a library module; a sensitivity probe takes the directional derivative of the
#   decoded signal with torch.autograd.forward_ad dual numbers (make_dual / unpack_dual)
# source: none found; the pattern as users write it
# results: sensitivity, decoded
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_quantiser23 import SoftRound  # noqa: E402


class Codec(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(6, 3)
        self.decode = nn.Linear(3, 6)

    def forward(self, x):
        return self.decode(SoftRound.apply(self.encode(x) * 4.0, 0.3))


torch.manual_seed(0)
codec = Codec()
signal = torch.randn(2, 6)
direction = torch.randn(2, 6)
with torch.no_grad(), fwAD.dual_level():
    decoded, sensitivity = fwAD.unpack_dual(codec(fwAD.make_dual(signal, direction)))
