# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 3
# trigger: a loader in another file (lib_pretrained.py) runs under @torch.inference_mode();
#   the model wraps the loaded table in nn.Parameter to fine-tune it
# source: https://github.com/tinygrad/tinygrad/issues/3832 (the PyTorch behaviour quoted there)
# helpers: lib_pretrained.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_pretrained import load_table  # noqa: E402


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(load_table(10, 4))  # PRIMARY
        self.out = nn.Linear(4, 1)

    def forward(self, ids):
        return self.out(self.table[ids].mean(dim=1))


torch.manual_seed(0)
model = BagOfWords()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
ids, y = torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([[1.0], [-1.0]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(ids), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
