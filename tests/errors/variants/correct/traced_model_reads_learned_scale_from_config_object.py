# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter or input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 28
# trigger: a regressor keeps its learned output scale on a plain config object (a dataclass handed to
#   __init__, field created with requires_grad=True) and reads it as self.config.scale in forward; an
#   export helper in another file traces the model with torch.jit.trace, and the traced copy is trained
# source: none found; the pattern as users write it (hyper-parameters and learned knobs in one config)
# helpers: lib_export28.py
# results: losses, model.body
import os
import sys
from dataclasses import dataclass, field

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_export28 import trace_for_serving  # noqa: E402


@dataclass
class HeadConfig:
    width: int = 4
    scale: torch.Tensor = field(default_factory=lambda: torch.ones(1, requires_grad=True))


class ScaledRegressor(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.body = nn.Linear(config.width, 1)
        self.scale = nn.Parameter(config.scale.detach().clone())

    def forward(self, x):
        return self.body(x) * self.scale  # PRIMARY


torch.manual_seed(0)
model = ScaledRegressor(HeadConfig())
inputs, targets = torch.randn(6, 4), torch.randn(6, 1)
traced = trace_for_serving(model, inputs)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = (traced(inputs) - targets).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
