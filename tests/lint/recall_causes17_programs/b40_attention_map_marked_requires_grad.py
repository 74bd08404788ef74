"""Cause 2 (ADL040, r616): a module marks its attention map `requires_grad =
True` to read its gradient later; the map is the softmax of a graph, not a
leaf, so the assignment raises."""
import torch
import torch.nn as nn


class SaliencyAttention(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.saved_map = None

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(1, 2)
        attn_map = torch.softmax(scores / 6 ** 0.5, dim=-1)
        attn_map.requires_grad = True  # bug
        attn_map.retain_grad()
        self.saved_map = attn_map
        return attn_map @ x


def run():
    torch.manual_seed(0)
    model = SaliencyAttention()
    out = model(torch.randn(2, 4, 6))
    out.pow(2).mean().backward()
