# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 26
# trigger: a text classifier keeps its pretrained embedding frozen (requires_grad_(False)) and is trained
#   with a hand-written momentum optimizer, a torch.optim.Optimizer subclass in another file built on
#   model.parameters(); its step() multiplies the learning rate by every parameter's .grad, which is
#   None for the frozen embedding
# source: https://github.com/Tiiiger/QPyTorch/issues/40 (a custom optimizer's step() breaks on a
#   parameter whose gradient is None, as frozen layers have; PyTorch's optimizers skip them)
# helpers: lib_heavy_ball26.py
# results: model, losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_heavy_ball26 import HeavyBall  # noqa: E402


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocabulary=20, width=6, classes=3):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.classifier = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.classifier(self.embedding(tokens).mean(dim=1))


torch.manual_seed(0)
model = BagOfEmbeddings()
model.embedding.requires_grad_(False)
optimizer = HeavyBall(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    tokens, labels = torch.randint(0, 20, (8, 5)), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
