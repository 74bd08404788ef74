# message: Output 0 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views.
# code: AD104 (catalogue: multi_output_view_inplace)
# trigger: an attention module splits a fused qkv projection with chunk(3) and scales q in place
#   (`q *= self.scale`)
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q *= self.scale  # PRIMARY
        return (q @ k.transpose(-2, -1)).softmax(-1) @ v


torch.manual_seed(0)
model = SelfAttention(4)
loss = model(torch.randn(2, 3, 4)).pow(2).mean()
loss.backward()
