# message: Output 0 of the user-provided function does not require gradients. The outputs must be computed
#   in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 25
# trigger: a soft-sensor model runs its forward under `with torch.set_grad_enabled(self.training):` (to
#   save memory when serving); after training, model.eval() and a sensitivity helper takes
#   torch.autograd.functional.jacobian(model, readings, strict=True): in eval mode the output has no
#   graph
# source: none found; the pattern as users write it
# results: model, losses, report
import os
import sys

import torch
from torch import nn
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SoftSensor(nn.Module):
    """Predicts two process values from five sensor readings; gradients only while training,
    to save memory when the plant's dashboard calls it."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 6), nn.Softplus(), nn.Linear(6, 2))

    def forward(self, readings):
        return self.body(readings)


def sensitivity(model, readings):
    """How much each prediction moves per unit change of each reading, at the operating point."""
    return jacobian(model, readings, strict=True)


torch.manual_seed(0)
model = SoftSensor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
readings = torch.randn(5)
target = torch.tensor([0.5, -0.2])
losses = []
for step in range(3):
    loss = (model(readings) - target).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
model.eval()
report = sensitivity(model, readings)
