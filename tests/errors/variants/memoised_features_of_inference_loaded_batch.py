# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 4
# trigger: a dataset class loads its tensors in an @torch.inference_mode() method; a memoising
#   helper in another file (lib_memo.py) keys its cache on the tensor's _version
# source: none found; the pattern as users write it
# helpers: lib_memo.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_memo import memoised  # noqa: E402


class TableDataset:
    @torch.inference_mode()  # PRIMARY
    def load(self):
        torch.manual_seed(1)
        self.x, self.y = torch.randn(6, 3), torch.randn(6, 1)
        return self


@memoised
def standardised(x):
    return (x - x.mean(dim=0)) / x.std(dim=0)


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = TableDataset().load()
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(standardised(data.x)), data.y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
