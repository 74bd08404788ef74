"""DeBERTa's disentangled self-attention masks the padded positions of its
attention scores with `attention_scores.masked_fill(~mask, min)` before the
softmax, but the line did not assign the result: `masked_fill` is the
out-of-place variant, so the scores reach the softmax unmasked and padding
tokens receive attention (and gradient).  Nothing raises.  The fix assigns
the result (or uses `masked_fill_`).
Buggy line: `attention_scores.masked_fill(...)` as a statement in
`DisentangledSelfAttention.forward`.
Expected finding: ADL021 there (an out-of-place op's result thrown away).
Source: https://github.com/huggingface/transformers/issues/35162"""
import math

import torch
import torch.nn as nn


class DisentangledSelfAttention(nn.Module):
    def __init__(self, hidden_size=8, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.query_proj = nn.Linear(hidden_size, hidden_size)
        self.key_proj = nn.Linear(hidden_size, hidden_size)
        self.value_proj = nn.Linear(hidden_size, hidden_size)

    def split_heads(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.split_heads(self.query_proj(hidden_states))
        key_layer = self.split_heads(self.key_proj(hidden_states))
        value_layer = self.split_heads(self.value_proj(hidden_states))
        scale = math.sqrt(query_layer.size(-1))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / scale
        attention_mask = attention_mask.bool()[:, None, None, :]
        attention_scores.masked_fill(~attention_mask, torch.finfo(query_layer.dtype).min)  # expect: ADL021
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        context = torch.matmul(attention_probs, value_layer)
        return context.transpose(1, 2).reshape(hidden_states.shape), attention_probs


def bug_shows():
    """Padded positions get attention weight; a masked reference gives
    them none."""
    torch.manual_seed(0)
    attention = DisentangledSelfAttention()
    hidden = torch.randn(1, 4, 8)
    mask = torch.tensor([[1, 1, 0, 0]])
    _, probs = attention(hidden, mask)
    return bool(probs[..., 2:].sum() > 0.1)
