# message: Output 0 of SplitWithSizes is a view and its base or another view of its base has been modified inplace.
# code: AD138 (catalogue: split_base_modified)
# set: 31
# trigger: a graph-attention layer projects each node to its source and destination scores in one
#   matrix, splits it with torch.split(scores, [1, 1], dim=-1) (split_with_sizes), then a helper in
#   another file adds the learned score bias to the matrix with `scores += bias`
# source: none found; the pattern as users write it (GAT's a_src/a_dst halves from one projection)
# helpers: lib_graph_attention31.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_graph_attention31 import add_score_bias  # noqa: E402


class GraphAttention(nn.Module):
    def __init__(self, features=4):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.score = nn.Linear(features, 2)
        self.score_bias = nn.Parameter(torch.zeros(2))

    def forward(self, h, src, dst):
        h = self.linear(h)
        scores = self.score(h)
        source_score, target_score = torch.split(scores, [1, 1], dim=-1)
        scores = add_score_bias(scores, self.score_bias)
        logits = nn.functional.leaky_relu(source_score[src, 0] + target_score[dst, 0] + scores.sum())
        weights = torch.exp(logits - logits.max())
        out = torch.zeros_like(h).index_add(0, dst, weights[:, None] * h[src])
        return out


torch.manual_seed(0)
model = GraphAttention()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
src = torch.tensor([0, 1, 2, 3, 0, 2])
dst = torch.tensor([1, 2, 3, 0, 2, 1])
features, target = torch.randn(4, 4), torch.randn(4, 4)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = (model(features, src, dst) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
