"""fairseq-gec's multi-head attention projects query, key and value with one
matrix and splits the result: `in_proj_qkv` returns
`F.linear(query, weight, bias).chunk(3, dim=-1)`, and `forward` then scales
the query in place, `q *= self.scaling`.  The chunks are views returned by a
function with several view outputs; writing one in place is forbidden
("Output 0 of SplitBackward0 is a view and is being modified inplace").  The
fix writes `q = q * self.scaling`.
Buggy line: `q *= self.scaling` in `MultiheadAttention.forward`.
Source: https://github.com/kanyun-inc/fairseq-gec/issues/45"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) * 0.1)
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def in_proj_qkv(self, query):
        return F.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)

    def forward(self, query, key, value, key_padding_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        q, k, v = self.in_proj_qkv(query)
        q *= self.scaling  # expect: ADL015

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn)


def run():
    torch.manual_seed(0)
    attention = MultiheadAttention(8, 2)
    x = torch.randn(5, 2, 8)
    attention(x, x, x).sum().backward()
