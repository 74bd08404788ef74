"""A transformer block with a rotary embedding that caches its cos/sin tables (flash-attention's
`RotaryEmbedding`): the tables are rebuilt only when a longer sequence arrives. An evaluation with
longer sequences runs under `torch.inference_mode()`, so the rebuilt tables are inference tensors;
when training resumes, `q * cos` saves one of them for backward and fails.
Source: https://github.com/Dao-AILab/flash-attention/pull/299 ("rotary: update cos/sin cache when
switching from inference mode": "Inference tensors cannot be saved for backward" after running
evaluation in inference mode and starting a new training phase; the fix rebuilds the cache when
it holds inference tensors and grad mode is on).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
DIM, VOCAB = 8, 16


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_cache(self, seqlen):
        if seqlen > self._seq_len_cached:
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self._cos_cached = emb.cos()
            self._sin_cached = emb.sin()

    def forward(self, q, k):
        seqlen = q.shape[-2]
        self._update_cos_sin_cache(seqlen)
        cos, sin = self._cos_cached[:seqlen], self._sin_cached[:seqlen]
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.rotary_emb = RotaryEmbedding(DIM)
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        h = self.embed(ids)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q, k = self.rotary_emb(q, k)
        return self.out(h + F.scaled_dot_product_attention(q, k, v, is_causal=True))


def lm_loss(model, ids):
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))


model = Block()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
train = torch.randint(0, VOCAB, (4, 9))
valid = torch.randint(0, VOCAB, (2, 13))
losses, valid_losses = [], []
for epoch in range(2):
    model.train()
    for step in range(2):
        loss = lm_loss(model, train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    model.eval()
    with torch.inference_mode():
        valid_losses.append(lm_loss(model, valid).clone())
result = {"losses": losses, "valid": valid_losses, "params": [p.detach().clone() for p in model.parameters()]}
