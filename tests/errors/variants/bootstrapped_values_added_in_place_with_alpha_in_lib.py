# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a
#   single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# helpers: lib_bootstrap_targets.py
# set: 19
# trigger: a value model's one-step bootstrapped sums v[t] + gamma * v[t + 1] are computed by a library
#   helper with targets[:-1].add_(targets[1:], alpha=gamma) on a clone of the values
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_bootstrap_targets import bootstrap


class ValueModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, states):
        return self.net(states).squeeze(-1)


torch.manual_seed(0)
model = ValueModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
states = torch.randn(5, 2, 3)  # time-major
returns = torch.randn(5, 2)
for _ in range(2):
    optimizer.zero_grad()
    loss = (bootstrap(model(states), 0.9) - returns).pow(2).mean()
    loss.backward()
    optimizer.step()
