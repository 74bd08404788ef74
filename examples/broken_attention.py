"""A small attention model with a classic in-place bug.

Padding positions are zeroed *in place* in the softmax output. softmax keeps its
output for backward, so `loss.backward()` fails with PyTorch's "modified by an
inplace operation" error, which does not say which line did it.

    autograd-doctor run examples/broken_attention.py
"""

import math

import torch
from torch import nn


class TinyAttention(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, pad_mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = scores.softmax(dim=-1)
        weights[pad_mask] = 0.0  # do not attend to padding
        return self.out(weights @ v)


def main():
    torch.manual_seed(0)
    model = TinyAttention(width=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 5, 16)
    lengths = torch.tensor([5, 3])
    pad_mask = (torch.arange(5)[None, None, :] >= lengths[:, None, None]).expand(2, 5, 5)
    for step in range(3):
        optimizer.zero_grad()
        loss = model(x, pad_mask).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
