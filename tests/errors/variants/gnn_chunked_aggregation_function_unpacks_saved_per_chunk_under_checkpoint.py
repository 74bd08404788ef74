# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 31
# trigger: a graph network's message passing is a hand-written Function (another file) that
#   aggregates over the edges in chunks; its backward reads ctx.saved_tensors in the loop over the
#   chunks, and the layers are checkpointed with use_reentrant=False
# source: none found; the pattern as users write it (a memory-bounded edge loop in backward)
# helpers: lib_message_passing31.py
# results: losses, model
import os
import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_message_passing31 import ChunkedAggregate  # noqa: E402


class GraphLayer(nn.Module):
    def __init__(self, features, edges):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.edge_weight = nn.Parameter(torch.full((edges,), 0.5))

    def forward(self, h, src, dst):
        return torch.relu(ChunkedAggregate.apply(self.linear(h), self.edge_weight, src, dst, 3))


torch.manual_seed(0)
src = torch.tensor([0, 1, 2, 3, 4, 0, 2])
dst = torch.tensor([1, 2, 3, 4, 0, 3, 0])
layers = nn.ModuleList([GraphLayer(4, 7), GraphLayer(4, 7)])
model = layers
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
features, target = torch.randn(5, 4), torch.randn(5, 4)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    h = features
    for layer in layers:
        h = checkpoint(layer, h, src, dst, use_reentrant=False)
    loss = (h - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
