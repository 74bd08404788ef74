# message: too many indices for tensor of dimension 2
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 28
# trigger: a DP-SGD-like callback in another file clips per-sample gradients, computed with
#   vmap(grad(...)) over functional_call, before each optimizer step; the text classifier pools its
#   sequence with the first (CLS) token as hidden[:, 0, :], written for a batch, and under vmap it sees
#   one sequence of shape [tokens, width]
# source: none found; the pattern as users write it (per-sample clipping around a transformer-style pooler)
# helpers: lib_private28.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_private28 import PerSampleClipping  # noqa: E402


class ClsClassifier(nn.Module):
    def __init__(self, vocabulary=20, width=4, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        self.mix = nn.Linear(width, width)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        hidden = torch.tanh(self.mix(self.embed(tokens)))
        return self.head(hidden[:, 0, :])


torch.manual_seed(0)
model = ClsClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
clipping = PerSampleClipping(model, max_norm=0.5)
losses = []
for _ in range(3):
    tokens, labels = torch.randint(0, 20, (5, 6)), torch.randint(0, 3, (5,))
    with torch.no_grad():
        losses.append(nn.functional.cross_entropy(model(tokens), labels).item())
    clipping.on_before_step((tokens, labels))
    optimizer.step()
