# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 23
# helpers: lib_checkpoint_loader23.py
# trigger: a loader in a library module, decorated with @torch.inference_mode() ("loading needs no
#   gradients"), returns a normalised pretrained embedding table; the model wraps it in nn.Parameter
#   to fine-tune it
# source: none found; the pattern as users write it
# results: model.table, model.head.weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_checkpoint_loader23 import load_table  # noqa: E402


class Retriever(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(load_table(10, 6))
        self.head = nn.Linear(6, 2)

    def forward(self, ids):
        return self.head(self.table[ids])


torch.manual_seed(0)
model = Retriever()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(3):
    ids = torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(model(ids), ids % 2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
