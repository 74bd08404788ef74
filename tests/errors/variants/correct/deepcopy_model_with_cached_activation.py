# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.
# code: AD303 (catalogue: deepcopy_non_leaf)
# trigger: a model's forward keeps its last features on self (for logging); after a training
#   step, copy.deepcopy(model) makes the EMA copy
# source: https://github.com/lucidrains/byol-pytorch/issues/95 (the pattern)
# results: ema, model
import copy

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.relu(self.body(x))
        self.last_features = h.detach()  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
optimizer.step()
ema = copy.deepcopy(model)
