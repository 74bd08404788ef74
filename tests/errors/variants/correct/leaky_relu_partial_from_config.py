# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not
#   supported.
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 3
# trigger: the activation comes from a dataclass config through functools.partial(F.leaky_relu,
#   negative_slope=..., inplace=True); the slope in the config is negative
# source: none found; the pattern as users write it
# results: losses, model
import functools
from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class Config:
    width: int = 4
    slope: float = -0.2


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden = nn.Linear(3, config.width)
        self.out = nn.Linear(config.width, 1)
        self.act = functools.partial(F.leaky_relu, negative_slope=config.slope, inplace=False)  # PRIMARY

    def forward(self, x):
        return self.out(self.act(self.hidden(x)))


torch.manual_seed(0)
model = MLP(Config())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
