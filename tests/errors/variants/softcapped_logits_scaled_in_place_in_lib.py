# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 5]], which is output 0 of TanhBackward0, is at version 1;
#   expected version 0 instead.
# code: AD101 (catalogue: saved_tensor_modified)
# helpers: lib_logit_softcap.py
# set: 19
# trigger: a classifier soft-caps its logits with tanh(logits / cap) * cap in a library helper that
#   scales the tanh output back in place (capped.mul_(cap)) to save a tensor
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_logit_softcap import softcap


class CappedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 5)

    def forward(self, x):
        return softcap(self.body(x), 2.0)


torch.manual_seed(0)
model = CappedClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(torch.randn(4, 3)), torch.tensor([0, 1, 2, 3]))
    loss.backward()
    optimizer.step()
