# message: you can only change requires_grad flags of leaf variables.
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 18
# trigger: a model reuses nn.MultiheadAttention's averaged attention weights as a pooling map and,
#   so that "the pooling does not train the attention", calls attn_weights.requires_grad_(False)
#   on them inside forward
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h, weights = self.attn(x, x, x)
        weights.requires_grad_(False)  # PRIMARY
        pooled = torch.bmm(weights.mean(1, keepdim=True), h).squeeze(1)
        return self.out(pooled)


torch.manual_seed(0)
model = AttentionPool(4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(torch.randn(2, 3, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
