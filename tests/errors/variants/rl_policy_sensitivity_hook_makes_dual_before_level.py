# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 31
# trigger: an RL policy's sensitivity to its observation is measured by a forward pre-hook (another
#   file) that turns the observation into a dual tensor; the script calls the policy before the
#   `with fwAD.dual_level():` block in which it unpacks the action logits' tangent
# source: none found; the pattern as users write it (a probe hook attached once, the level opened for reading)
# helpers: lib_sensitivity31.py
# results: logits, sensitivity
import os
import sys

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sensitivity31 import attach_observation_tangent  # noqa: E402

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
observation = torch.randn(5, 4)
direction = torch.zeros(5, 4)
direction[:, 0] = 1.0  # the cart's position
handle = attach_observation_tangent(policy, direction)
dual_logits = policy(observation)  # PRIMARY
with fwAD.dual_level():
    logits, sensitivity = fwAD.unpack_dual(dual_logits)
handle.remove()
