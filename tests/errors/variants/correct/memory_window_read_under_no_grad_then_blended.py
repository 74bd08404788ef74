# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled.
# code: AD105 (catalogue: view_nograd_inplace)
# set: 20
# trigger: a key-value memory's read() method is decorated with @torch.no_grad() (reads are meant as
#   constants) and returns a slice of its learned table; the model blends the new encoding into the
#   window it read with window.lerp_(encoded, 0.5), with grad mode on
# source: none found; the pattern as users write it (no_grad readers of learned memories)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Memory(nn.Module):
    def __init__(self, slots, dim):
        super().__init__()
        self.table = nn.Parameter(torch.randn(slots, dim))

    @torch.no_grad()
    def read(self, start, length):
        return self.table[start:start + length]


class Reader(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.memory = Memory(16, dim)
        self.encode = nn.Linear(3, dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x, start):
        window = self.memory.read(start, x.shape[0])
        encoded = self.encode(x)
        window = window.lerp(encoded, 0.5)  # PRIMARY
        return self.head(window)


torch.manual_seed(0)
model = Reader(4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for start in range(3):
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    loss = nn.functional.mse_loss(model(x, start), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
