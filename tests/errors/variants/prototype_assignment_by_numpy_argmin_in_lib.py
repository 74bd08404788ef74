# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 13
# helpers: lib_matching.py
# trigger: a clustering loss assigns each embedding to its nearest prototype with np.argmin over the
#   distance matrix, in a helper in another file; the distances require grad (they are also the loss)
# source: none found; the pattern as users write it (NumPy assignment steps inside a torch loss)
# results: model, prototypes, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_matching import nearest_prototype  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(4, 2)
prototypes = nn.Parameter(torch.randn(3, 2))
optimizer = torch.optim.SGD([*model.parameters(), prototypes], lr=0.1)
x = torch.randn(6, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    cost = torch.cdist(model(x), prototypes)
    assignment = nearest_prototype(cost)
    loss = cost[torch.arange(len(x)), assignment].pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
