"""Unsupervised machine translation (Facebook Research), transformer encoder:
its multi-head attention is an early copy of fairseq's.  For self-attention
(`query`, `key` and `value` the same tensor, as every encoder layer passes
them) it projects once and splits, `q, k, v = self.in_proj_qkv(query)` (a
`chunk(3)`), then scales the query in place, `q *= self.scaling`.  `chunk`
returns several views of one tensor, and PyTorch (since 1.7) forbids writing
one of them in place when it has a graph: the first training forward of the
transformer (`--transformer True`, the default) raises "Output 0 of Split is
a view and is being modified inplace".  Later fairseq writes the scaling out
of place, `q = q * self.scaling`.
Source: https://github.com/facebookresearch/UnsupervisedMT (NMT/src/modules/multihead_attention.py)"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.in_proj_weight = Parameter(torch.Tensor(3 * embed_dim, embed_dim))
        self.in_proj_bias = Parameter(torch.Tensor(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.constant_(self.in_proj_bias, 0.)

    def forward(self, query, key, value, key_padding_mask=None):
        qkv_same = query.data_ptr() == key.data_ptr() == value.data_ptr()
        kv_same = key.data_ptr() == value.data_ptr()
        tgt_len, bsz, embed_dim = query.size()

        if qkv_same:
            # self-attention
            q, k, v = self.in_proj_qkv(query)
        elif kv_same:
            # encoder-decoder attention
            q = self.in_proj_q(query)
            k, v = self.in_proj_kv(key)
        else:
            q = self.in_proj_q(query)
            k = self.in_proj_k(key)
            v = self.in_proj_v(value)
        q *= self.scaling  # expect: ADL015

        src_len = k.size(0)
        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(src_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(src_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), float('-inf'))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = F.softmax(attn_weights.float(), dim=-1).type_as(attn_weights)
        attn_weights = F.dropout(attn_weights, p=self.dropout, training=self.training)
        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn)

    def in_proj_qkv(self, query):
        return self._in_proj(query).chunk(3, dim=-1)

    def in_proj_kv(self, key):
        return self._in_proj(key, start=self.embed_dim).chunk(2, dim=-1)

    def in_proj_q(self, query):
        return self._in_proj(query, end=self.embed_dim)

    def in_proj_k(self, key):
        return self._in_proj(key, start=self.embed_dim, end=2 * self.embed_dim)

    def in_proj_v(self, value):
        return self._in_proj(value, start=2 * self.embed_dim)

    def _in_proj(self, input, start=None, end=None):
        weight = self.in_proj_weight
        bias = self.in_proj_bias
        if end is not None:
            weight = weight[:end, :]
            bias = bias[:end]
        if start is not None:
            weight = weight[start:, :]
            bias = bias[start:]
        return F.linear(input, weight, bias)


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim, num_heads, ffn_dim):
        super().__init__()
        self.self_attn = MultiheadAttention(embed_dim, num_heads)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)
        self.layer_norms = nn.ModuleList([nn.LayerNorm(embed_dim) for _ in range(2)])

    def forward(self, x, encoder_padding_mask):
        residual = x
        x = self.self_attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask)
        x = self.layer_norms[0](residual + x)
        residual = x
        x = self.fc2(F.relu(self.fc1(x)))
        return self.layer_norms[1](residual + x)


def run():
    torch.manual_seed(0)
    embed = nn.Embedding(20, 16)
    layer = TransformerEncoderLayer(16, 4, 32)
    optimizer = torch.optim.Adam(list(embed.parameters()) + list(layer.parameters()), lr=1e-3)
    tokens = torch.randint(1, 20, (7, 3))  # (seq_len, batch)
    padding = torch.zeros(3, 7, dtype=torch.bool)
    x = layer(embed(tokens), padding)
    loss = x.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
