"""Fine-tuning a model built from the Llama reference implementation's `Attention` module
(llama/model.py): for generation, each layer keeps a key/value cache, `self.cache_k` and
`self.cache_v`, and every forward writes this step's keys and values into it in place
(`self.cache_k[:bsz, start_pos:start_pos + seqlen] = xk`) and reads the keys back from it. In
training the cache then carries the previous step's graph: the second `loss.backward()` goes
through the first step's write into the cache and raises "Trying to backward through the graph a
second time".
Source: https://github.com/meta-llama/llama-cookbook/issues/247 ("Cache mechanism would result in
Error while training?": "During the previous forward pass, the cache for k and v is saved as part of
the old computation graph"; the reporter's change, kept by the thread: detach the caches at the
start of forward, `self.cache_k = self.cache_k.to(xq).detach()`, so each step's graph starts from a
cache without history).
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim=16, n_heads=2, max_batch_size=2, max_seq_len=8):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.cache_k = torch.zeros(max_batch_size, max_seq_len, n_heads, self.head_dim)
        self.cache_v = torch.zeros(max_batch_size, max_seq_len, n_heads, self.head_dim)

    def forward(self, x, start_pos, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        self.cache_k = self.cache_k.to(xq).detach()
        self.cache_v = self.cache_v.to(xq).detach()
        self.cache_k[:bsz, start_pos:start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos:start_pos + seqlen] = xv
        keys = self.cache_k[:bsz, :start_pos + seqlen]
        values = self.cache_v[:bsz, :start_pos + seqlen]
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        output = torch.matmul(F.softmax(scores, dim=-1), values)
        return self.wo(output.transpose(1, 2).contiguous().view(bsz, seqlen, -1))


class TinyLlama(nn.Module):
    def __init__(self, vocab_size=32, dim=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.attention = Attention(dim)
        self.output = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, tokens, start_pos=0):
        seqlen = tokens.shape[1]
        mask = torch.triu(torch.full((seqlen, seqlen), float("-inf")), diagonal=1)
        h = self.tok_embeddings(tokens)
        h = h + self.attention(h, start_pos, mask)
        return self.output(h)


model = TinyLlama()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
batches = [torch.randint(0, 32, (2, 8)) for _ in range(3)]
losses = []
for tokens in batches:
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
