# message: output with shape [4] doesn't match the broadcast shape [5, 4]
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 14
# helpers: lib_attention_bias.py
# trigger: a helper in another file written for one query adds the scaled dot products to the
#   learned relative-position bias (gathered from a table, as T5 and Swin do) with `+=`; the model maps it over the queries with torch.func.vmap, the bias shared
#   (in_dims=None)
# source: none found; the pattern as users write it (a per-query function vmapped over a batch)
# results: layer, losses
import os
import sys

import torch
from torch import nn
from torch.func import vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_attention_bias import attention_weights  # noqa: E402


class BiasedAttention(nn.Module):
    def __init__(self, keys):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.table = nn.Parameter(torch.zeros(2 * keys - 1))
        self.register_buffer("index", torch.arange(keys) + keys - 1)

    def forward(self, queries, keys, values):
        bias = self.table[self.index]
        weights = vmap(attention_weights, in_dims=(0, None, None))(self.proj(queries), keys, bias)
        return weights @ values


torch.manual_seed(0)
layer = BiasedAttention(4)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
queries, keys, values, target = torch.randn(5, 3), torch.randn(4, 3), torch.randn(4, 2), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (layer(queries, keys, values) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
