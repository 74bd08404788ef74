# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().
# code: AD139 (catalogue: detach_saved_inplace)
# set: 18
# trigger: a stateful recurrent model keeps its last hidden state (tanh's output, which tanh saved)
#   on self and truncates backpropagation with self.state.detach_() in a detach_state() method that
#   the training loop calls after computing the loss, before backward()
# source: none found; the pattern as users write it (truncated BPTT with a stateful module)
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class StatefulCell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.inp = nn.Linear(n, n)
        self.rec = nn.Linear(n, n, bias=False)
        self.state = torch.zeros(1, n)

    def forward(self, x):
        self.state = torch.tanh(self.inp(x) + self.rec(self.state))
        return self.state

    def detach_state(self):
        self.state = self.state.detach()  # PRIMARY


torch.manual_seed(0)
model = StatefulCell(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    out = model(torch.randn(1, 3))
    loss = out.pow(2).sum()
    model.detach_state()
    loss.backward()
    optimizer.step()
