# message: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel
#   (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets,
#   and hence detach_() cannot be called on these gradients. To fix this error, please refer to the
#   Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.
# code: AD108 (catalogue: detach_view_inplace)
# set: 12
# helpers: lib_bank.py
# trigger: a feature bank in another file stores each batch's embeddings with a leading axis,
#   z.unsqueeze(0).detach_() (unsqueeze makes a view), for a later torch.cat of the bank
# source: none found; the pattern as users write it (memory banks that "drop the graph" in place)
# results: losses, model, bank_size
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_bank import FeatureBank  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
bank = FeatureBank()
x = torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    z = model(x)
    bank.add(z)
    loss = z.pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
bank_size = tuple(bank.stacked().shape)
