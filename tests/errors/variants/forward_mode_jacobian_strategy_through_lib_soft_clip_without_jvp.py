# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 25
# trigger: a controller's input-output Jacobian (3 inputs, 8 outputs) is taken with
#   torch.autograd.functional.jacobian(..., vectorize=True, strategy="forward-mode"); the hidden
#   layer goes through a soft-clip Function in a library module (lib_v25_softclip.py) written with
#   setup_context, generate_vmap_rule and backward, but no jvp
# source: none found; the pattern as users write it (the forward-mode strategy picked for a tall Jacobian)
# helpers: lib_v25_softclip.py
# results: gain
import os
import sys

import torch
from torch import nn
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_v25_softclip import soft_clip  # noqa: E402


class Controller(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 16)
        self.out = nn.Linear(16, 8)

    def forward(self, state):
        return self.out(soft_clip(self.hidden(state)))


torch.manual_seed(0)
controller = Controller()
state = torch.randn(3)
# few inputs, many outputs: the forward-mode strategy takes one pass per input
gain = jacobian(controller, state, vectorize=True, strategy="forward-mode")
