# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 22
# trigger: a contrastive model makes its learnable temperature in __init__ as
#   nn.Parameter(torch.tensor(0.07)).clamp(min=0.01) (a computed tensor, not a parameter, so not in
#   model.parameters()); the training script adds model.temperature to Adam's list by hand
# source: none found; the pattern as users write it
# results: model.proj.weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Contrastive(nn.Module):
    def __init__(self, dim, out):
        super().__init__()
        self.proj = nn.Linear(dim, out)
        self.temperature = nn.Parameter(torch.tensor(0.07)).clamp(min=0.01)  # PRIMARY

    def forward(self, a, b):
        za = nn.functional.normalize(self.proj(a), dim=1)
        zb = nn.functional.normalize(self.proj(b), dim=1)
        logits = za @ zb.t() / self.temperature
        return nn.functional.cross_entropy(logits, torch.arange(len(a)))


torch.manual_seed(0)
model = Contrastive(6, 4)
optimizer = torch.optim.Adam(list(model.parameters()) + [model.temperature], lr=1e-2)
losses = []
for step in range(3):
    a = torch.randn(5, 6)
    b = a + 0.1 * torch.randn(5, 6)
    loss = model(a, b)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
