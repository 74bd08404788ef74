# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# helpers: lib_probing.py
# set: 17
# trigger: a library module (lib_probing.py) wraps fwAD.dual_level() in a @contextlib.contextmanager
#   helper; the probing method of a class calls forward_mode() as a plain statement, which only makes a
#   generator and enters no level, before make_dual
# source: none found; the pattern as users write it (a context-manager helper called like a function)
# results: outputs, tangents
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_probing import forward_mode  # noqa: E402


class DirectionalProbe:
    def __init__(self, model):
        self.model = model

    def along(self, x, direction):
        with forward_mode():  # PRIMARY
            dual = fwAD.make_dual(x, direction)
            out, tangent = fwAD.unpack_dual(self.model(dual))
        return out.detach(), tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Softplus(), nn.Linear(4, 2))
probe = DirectionalProbe(model)
x = torch.randn(5, 3)
outputs, tangents = probe.along(x, torch.randn(5, 3))
