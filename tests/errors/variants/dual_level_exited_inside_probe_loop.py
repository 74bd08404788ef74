# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 18
# trigger: a sensitivity probe class enters the forward-AD level with fwAD.enter_dual_level() in its
#   start() method and leaves it with fwAD.exit_dual_level() in stop(); the script calls stop()
#   inside the loop over directions (one indentation level too deep), so the second direction's
#   make_dual finds no level
# source: none found; the pattern as users write it (explicit enter/exit instead of `with`)
# results: slopes
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SensitivityProbe:
    def __init__(self, model):
        self.model = model

    def start(self):
        fwAD.enter_dual_level()

    def stop(self):
        fwAD.exit_dual_level()

    def slope(self, x, direction):
        out = self.model(fwAD.make_dual(x, direction))
        return fwAD.unpack_dual(out).tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(2, 3)
probe = SensitivityProbe(model)
slopes = []
probe.start()
for k in range(3):
    slopes.append(probe.slope(x, torch.eye(3)[k].expand_as(x)).detach())
    probe.stop()  # PRIMARY
