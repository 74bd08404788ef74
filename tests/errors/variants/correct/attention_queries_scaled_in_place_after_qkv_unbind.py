# message: Output 0 of Unbind is a view and is being modified inplace. This view is the
#   output of a function that returns multiple views. Such functions do not allow the output views to
#   be modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 21
# trigger: a self-attention module splits its fused projection with qkv.unbind(0) into queries,
#   keys and values and scales the queries in place (q.mul_(self.scale)) before the dot products
# source: none found; the pattern as users write it (timm-style fused qkv attention)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale  # PRIMARY
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, d))


torch.manual_seed(0)
model = SelfAttention(8, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(3):
    x = torch.randn(2, 5, 8)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
