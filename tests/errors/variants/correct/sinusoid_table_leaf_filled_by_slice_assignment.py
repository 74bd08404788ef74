# message: a view of a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_view_inplace)
# set: 19
# trigger: a learnable positional table is made as torch.zeros(..., requires_grad=True) in __init__ and
#   initialised with sinusoids by slice assignment (self.pos[:, 0::2] = torch.sin(...)) before it is
#   wrapped as a parameter
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class PositionalEncoder(nn.Module):
    def __init__(self, length, dim):
        super().__init__()
        table = torch.zeros(length, dim)
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-2.0 / dim))
        table[:, 0::2] = torch.sin(position * frequency)  # PRIMARY
        table[:, 1::2] = torch.cos(position * frequency)
        self.pos = nn.Parameter(table)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(x + self.pos)


torch.manual_seed(0)
model = PositionalEncoder(3, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(2, 3, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
