# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 19
# trigger: a sensitivity report takes torch.autograd.functional.jacobian(strict=True) of a model
#   wrapper's predict() method, which is decorated with @torch.no_grad() for serving
# source: none found; the pattern as users write it
# results: jac
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.autograd.functional import jacobian


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        return self.forward(x)


torch.manual_seed(0)
model = Regressor()
jac = jacobian(model.predict, torch.randn(3), strict=True)
