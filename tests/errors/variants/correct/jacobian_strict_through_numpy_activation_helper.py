# message: Output 0 of the user-provided function does not require gradients. The outputs must be computed
#   in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 22
# helpers: lib_numpy_activation.py
# trigger: the input Jacobian of a small network by torch.autograd.functional.jacobian(strict=True), the
#   network's activation applied by a NumPy helper in a library module (x.detach().numpy(), np.tanh,
#   torch.from_numpy)
# source: none found; the pattern as users write it
# results: jac
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.autograd.functional import jacobian

from lib_numpy_activation import np_tanh


torch.manual_seed(0)
layer = nn.Linear(3, 2).double()


def network(x):
    return np_tanh(layer(x))


x = torch.randn(3, dtype=torch.float64)
jac = jacobian(network, x, strict=True)
