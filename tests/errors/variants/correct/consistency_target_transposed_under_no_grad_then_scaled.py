# message: A view was created in no_grad mode and its base or another view of its base has been modified
#   inplace with grad mode enabled.
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 20
# trigger: a consistency regulariser takes its stop-gradient target as the transposed code matrix
#   under torch.no_grad() (target = codes.T, a view), then sharpens the codes in place with a learned
#   temperature (codes.mul_(self.inv_temp)) before comparing them with target.T
# source: none found; the pattern as users write it (stop-gradient targets taken as views)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class ConsistencyModel(nn.Module):
    def __init__(self, dim, codes):
        super().__init__()
        self.encoder = nn.Linear(dim, codes)
        self.inv_temp = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        codes = self.encoder(x)
        with torch.no_grad():
            target = codes.T.clone()  # PRIMARY
        codes.mul_(self.inv_temp)
        return ((codes.softmax(-1) - target.T.softmax(-1)) ** 2).sum(-1).mean()


torch.manual_seed(0)
model = ConsistencyModel(5, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    loss = model(torch.randn(8, 5))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
