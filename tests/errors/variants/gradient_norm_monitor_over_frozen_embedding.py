# message: 'NoneType' object has no attribute 'norm'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 6
# trigger: a monitoring helper in another file (lib_monitor.py) logs every named parameter's
#   gradient norm after backward(); the pretrained embedding is frozen, so its .grad is None
# source: none found; the pattern as users write it
# helpers: lib_monitor.py
# results: losses, norms, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_monitor import gradient_norms  # noqa: E402


class TextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.embedding.weight.requires_grad = False
        self.classifier = nn.Linear(4, 2)

    def forward(self, tokens):
        return self.classifier(self.embedding(tokens).mean(1))


torch.manual_seed(0)
model = TextModel()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
tokens, labels = torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([0, 1])
losses, norms = [], []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    norms.append(gradient_norms(model))
    optimizer.step()
    losses.append(loss.item())
