# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 3
# trigger: fine-tuning: the encoder is frozen with requires_grad_(False); a hand-written SGD step
#   in another file (lib_optim.py) updates every parameter of the model with p.grad
# source: none found; the pattern as users write it
# helpers: lib_optim.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_optim import sgd_step  # noqa: E402


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


torch.manual_seed(0)
model = Classifier()
model.encoder.requires_grad_(False)
x, labels = torch.randn(8, 4), torch.randint(0, 2, (8,))
losses = []
for _ in range(3):
    model.zero_grad()
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    sgd_step(model.parameters(), lr=0.5)
    losses.append(loss.item())
