"""fairseq (pytorch-tpu fork used by the Cloud TPU transformer tutorial), fairseq/modules/
multihead_attention.py: for self-attention the projection is split with
`q, k, v = self.in_proj_qkv(query)` (`self._in_proj(query).chunk(3, dim=-1)`) and the queries are
then scaled in place, `q *= self.scaling`. With the torch nightly of 23 July 2020 training failed
("Output 0 of SplitBackward is a view and is being modified inplace. This view is an output of a
function that returns multiple views ..." then "one of the variables needed for gradient
computation has been modified by an inplace operation"); current torch refuses the in-place write
in the forward. The merged fix (pytorch-tpu/fairseq PR 37) replaces the offending in-place
operation: `q = q * self.scaling`.
Source: https://github.com/pytorch/xla/issues/2369
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def _in_proj(self, input):
        return F.linear(input, self.in_proj_weight, self.in_proj_bias)

    def in_proj_qkv(self, query):
        return self._in_proj(query).chunk(3, dim=-1)

    def forward(self, query, key_padding_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        q, k, v = self.in_proj_qkv(query)
        q *= self.scaling

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, -1)
            attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, -1)
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn), attn_weights


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim=16, heads=2, ffn=32):
        super().__init__()
        self.self_attn = MultiheadAttention(embed_dim, heads)
        self.self_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, ffn)
        self.fc2 = nn.Linear(ffn, embed_dim)
        self.final_layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, x, encoder_padding_mask):
        residual = x
        x, _ = self.self_attn(query=x, key_padding_mask=encoder_padding_mask)
        x = self.self_attn_layer_norm(residual + x)
        residual = x
        x = self.fc2(F.relu(self.fc1(x)))
        return self.final_layer_norm(residual + x)


class Model(nn.Module):
    def __init__(self, vocab=20, embed_dim=16, classes=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, embed_dim, padding_idx=0)
        self.layers = nn.ModuleList([TransformerEncoderLayer(embed_dim), TransformerEncoderLayer(embed_dim)])
        self.head = nn.Linear(embed_dim, classes)

    def forward(self, src_tokens):
        padding_mask = src_tokens.eq(0)
        x = self.embed_tokens(src_tokens).transpose(0, 1)
        for layer in self.layers:
            x = layer(x, padding_mask)
        return self.head(x.mean(0))


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(3):
    src_tokens = torch.randint(1, 20, (4, 6))
    src_tokens[:, -1] = 0
    target = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(src_tokens), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
