# message: unsupported operation: more than one element of the written-to tensor refers to a single
#   memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 13
# helpers: lib_masks.py
# trigger: a helper in another file returns the padding mask torch.broadcast_to'd to [batch, steps,
#   steps]; the attention module adds the causal mask into it in place (mask += causal)
# source: none found; the pattern as users write it (broadcast_to to give masks the scores' shape)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_masks import padding_mask  # noqa: E402


class TinyAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(3, 6)

    def forward(self, x, lengths):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(1, 2)
        steps = x.shape[1]
        mask = padding_mask(lengths, steps)
        mask += torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)
        return torch.softmax(scores + mask, dim=-1) @ x


torch.manual_seed(0)
model = TinyAttention()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, lengths = torch.randn(2, 4, 3), [4, 3]
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model(x, lengths).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
