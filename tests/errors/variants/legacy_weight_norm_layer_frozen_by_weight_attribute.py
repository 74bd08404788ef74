# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 21
# trigger: an audio decoder wraps its convolutions in the legacy torch.nn.utils.weight_norm and, to
#   fine-tune only the last one, freezes the first with conv.weight.requires_grad_(False), a weight
#   computed from weight_g and weight_v
# source: none found; the pattern as users write it (vocoders built with weight_norm)
# results: model, losses
import os
import sys

import torch
from torch import nn
from torch.nn.utils import weight_norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = weight_norm(nn.Conv1d(2, 4, 3, padding=1))
        self.last = weight_norm(nn.Conv1d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.last(torch.relu(self.first(x)))


torch.manual_seed(0)
model = Decoder()
model.first.weight.requires_grad_(False)  # PRIMARY
model.first.bias.requires_grad_(False)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
losses = []
for _ in range(3):
    x, y = torch.randn(2, 2, 10), torch.randn(2, 1, 10)
    loss = nn.functional.l1_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
