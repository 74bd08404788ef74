# message: If your Function modifies inplace an input that is a view of another Tensor, your Function
#   cannot return more than one Tensor. This is not supported.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 26
# trigger: an attention layer with query-key normalisation projects q, k and v with one fused Linear and
#   splits them with .chunk(3, dim=-1); the queries and the keys, views of the fused projection, are
#   given to a memory-saving in-place L2 normalisation Function (another file) that also returns the
#   norms it divided by
# source: none found; the pattern as users write it (QK-norm on the pieces of a fused qkv projection)
# helpers: lib_qk_norm26.py
# results: layer, outputs
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_qk_norm26 import InplaceL2Normalize  # noqa: E402


class QKNormAttention(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, tokens):
        q, k, v = self.qkv(tokens).chunk(3, dim=-1)
        q, _ = InplaceL2Normalize.apply(q.clone())  # PRIMARY
        k, _ = InplaceL2Normalize.apply(k.clone())
        weights = torch.softmax(self.scale * q @ k.transpose(-2, -1), dim=-1)
        return weights @ v


torch.manual_seed(0)
layer = QKNormAttention()
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
outputs = []
for _ in range(2):
    attended = layer(torch.randn(2, 5, 8))
    loss = attended.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    outputs.append(attended.detach())
