"""ParlAI's attention masked the padded memory positions with
`dot_prod.masked_fill(~mask, neginf)` written as a statement: the
out-of-place `masked_fill` returns a new tensor and leaves `dot_prod` as it
was, so the softmax gives weight to padding and the gradients reach the
padded memory.  Nothing raises.  The fix uses `masked_fill_` (or assigns the
result).
Buggy line: `dot_prod.masked_fill(...)` in `BasicAttention.forward`.
Source: https://github.com/facebookresearch/ParlAI/pull/3068"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def neginf(dtype):
    return -1e20 if dtype is torch.float32 else -1e4


class BasicAttention(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, xs, mem, mask=None):
        dot_prod = torch.bmm(xs, mem.transpose(1, 2))
        if mask is not None:
            attn_mask = (mask == 0).unsqueeze(1).expand_as(dot_prod)
            dot_prod.masked_fill(attn_mask, neginf(dot_prod.dtype))  # expect: ADL021
        attn_weights = F.softmax(dot_prod, dim=-1)
        return torch.bmm(attn_weights, mem), attn_weights


def bug_shows():
    """Padded memory positions get attention weight."""
    torch.manual_seed(0)
    attention = BasicAttention()
    xs, mem = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    _, weights = attention(xs, mem, mask)
    return bool(weights[0, :, 3:].sum() > 0)
