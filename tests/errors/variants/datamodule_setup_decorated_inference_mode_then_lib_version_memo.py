# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 29
# trigger: a DataModule-like class decorates its setup() method with @torch.inference_mode() (it only
#   builds tensors); the training step standardises the feature table with a statistics cache in
#   another file that keys its cache on table._version
# source: none found; the pattern as users write it (inference_mode as a decorator of data preparation)
# helpers: lib_memo29.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_memo29 import CachedStandardiser  # noqa: E402


class TabularDataModule:
    def __init__(self, rows=12, features=4):
        self.rows, self.features = rows, features
        self.table = None
        self.targets = None

    @torch.inference_mode()  # PRIMARY
    def setup(self):
        generator = torch.Generator().manual_seed(0)
        raw = torch.randn(self.rows, self.features, generator=generator)
        self.table = torch.cat([raw, raw[:, :1] ** 2], 1)
        self.targets = raw.sum(1, keepdim=True)


data = TabularDataModule()
data.setup()
standardise = CachedStandardiser()
torch.manual_seed(0)
model = nn.Linear(5, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(standardise(data.table)), data.targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
