# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [2, 3] while the given forward gradient is of size [3, 2].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 19
# trigger: the directional derivative of a linear layer's output along a perturbation of its weight, in
#   forward mode; the direction is drawn as (in_features, out_features), the x @ W layout of the maths,
#   while nn.Linear stores its weight as (out_features, in_features)
# source: none found; the pattern as users write it
# results: tangent
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch.autograd.forward_ad as fwAD
from torch.func import functional_call


torch.manual_seed(0)
layer = nn.Linear(3, 2)
x = torch.randn(4, 3)
direction = torch.randn(layer.in_features, layer.out_features)
params = {name: p.detach() for name, p in layer.named_parameters()}
with fwAD.dual_level():
    params["weight"] = fwAD.make_dual(params["weight"], direction.t())  # PRIMARY
    out = functional_call(layer, params, (x,))
    tangent = fwAD.unpack_dual(out).tangent
