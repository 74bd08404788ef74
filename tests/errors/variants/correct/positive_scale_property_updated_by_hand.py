# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 20
# trigger: a calibration module keeps its temperature positive by storing its log and exposing the
#   temperature as a @property (self.log_t.exp()); the hand-written gradient-descent step updates the
#   names the model shows, [model.temperature, model.bias], and reads the property's .grad, None
# source: none found; the pattern as users write it (constrained values exposed as properties)
# results: model.log_t, model.bias, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class TemperatureScaling(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_t = nn.Parameter(torch.zeros(()))
        self.bias = nn.Parameter(torch.zeros(3))

    @property
    def temperature(self):
        return self.log_t.exp()

    def forward(self, logits):
        return logits / self.temperature + self.bias


torch.manual_seed(0)
model = TemperatureScaling()
logits, labels = torch.randn(32, 3) * 3, torch.randint(0, 3, (32,))
lr = 0.1
losses = []
for _ in range(3):
    model.zero_grad()
    loss = nn.functional.cross_entropy(model(logits), labels)
    loss.backward()
    with torch.no_grad():
        for p in [model.log_t, model.bias]:  # PRIMARY
            p.data -= lr * p.grad
    losses.append(loss.detach())
