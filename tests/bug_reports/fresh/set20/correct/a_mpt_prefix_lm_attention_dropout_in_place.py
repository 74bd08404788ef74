"""Fine-tuning an MPT prefix-LM exported to the Hugging Face format (mosaicml/llm-foundry,
`scaled_multihead_dot_product_attention` in the exported attention code): the attention weights
are the softmax's output and, when attention dropout is on, are dropped out with
`F.dropout(attn_weight, p, training=training)`. Pre-training ran with
attn_pdrop=0, so the in-place write never ran; the user set attn_pdrop=0.1 for fine-tuning and
the first backward() fails: the softmax keeps its output for backward and the dropout overwrote it
("... which is output 0 of SoftmaxBackward0, is at version 1; expected version 0").
Source: https://github.com/mosaicml/llm-foundry/issues/1046 ("Setting Dropout in MPT Prefix-LM after
Exporting to HuggingFace Crashes during Fine-tuning"; the correct version drops out of place).
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, D_MODEL, N_HEADS, SEQ = 20, 16, 2, 6


def scaled_multihead_dot_product_attention(query, key, value, n_heads, attn_bias, dropout_p, training):
    b, s, d = query.shape
    q = query.view(b, s, n_heads, d // n_heads).transpose(1, 2)
    k = key.view(b, s, n_heads, d // n_heads).transpose(1, 2)
    v = value.view(b, s, n_heads, d // n_heads).transpose(1, 2)
    attn_weight = q @ k.transpose(-2, -1) / math.sqrt(d // n_heads)
    attn_weight = attn_weight + attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    if dropout_p:
        attn_weight = F.dropout(attn_weight, p=dropout_p, training=training)
    out = attn_weight @ v
    return out.transpose(1, 2).reshape(b, s, d)


class MPTBlock(nn.Module):
    def __init__(self, attn_config):
        super().__init__()
        self.attn_config = attn_config
        self.norm_1 = nn.LayerNorm(D_MODEL)
        self.Wqkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL)
        self.norm_2 = nn.LayerNorm(D_MODEL)
        self.ffn = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(), nn.Linear(4 * D_MODEL, D_MODEL))

    def forward(self, x, attn_bias):
        q, k, v = self.Wqkv(self.norm_1(x)).chunk(3, dim=-1)
        attn = scaled_multihead_dot_product_attention(q, k, v, N_HEADS, attn_bias,
                                                      self.attn_config["attn_pdrop"], self.training)
        x = x + self.out_proj(attn)
        return x + self.ffn(self.norm_2(x))


class PrefixLM(nn.Module):
    def __init__(self, attn_config):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([MPTBlock(attn_config) for _ in range(2)])
        self.norm_f = nn.LayerNorm(D_MODEL)

    def forward(self, input_ids, prefix_mask):
        causal = torch.ones(SEQ, SEQ).tril().bool()
        allowed = causal | prefix_mask[:, None, None, :].bool()  # bidirectional over the prefix
        attn_bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
        x = self.wte(input_ids)
        for block in self.blocks:
            x = block(x, attn_bias)
        return self.norm_f(x) @ self.wte.weight.t()


attn_config = {"attn_pdrop": 0.0}
model = PrefixLM(attn_config)
attn_config["attn_pdrop"] = 0.1  # turned on for fine-tuning after the export
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

input_ids = torch.randint(0, VOCAB, (4, SEQ))
prefix_mask = torch.zeros(4, SEQ)
prefix_mask[:, :3] = 1
labels = input_ids.roll(-1, dims=1)

model.train()
losses = []
for step in range(3):
    logits = model(input_ids, prefix_mask)
    loss = F.cross_entropy(logits[:, 2:-1].reshape(-1, VOCAB), labels[:, 2:-1].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
