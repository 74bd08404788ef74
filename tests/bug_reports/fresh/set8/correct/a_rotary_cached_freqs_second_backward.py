"""A small causal language model with rotary position embeddings (rotary-embedding-torch's
`RotaryEmbedding`): the rotation angles `freqs` are computed from the `self.freqs` parameter and
cached per sequence length. The fine-tuning script makes every parameter of the model trainable,
the frequency parameter included, so the cached angles carry a graph; the second iteration reads
them from the cache and its `backward()` goes through the first iteration's freed graph.
Source: https://github.com/lucidrains/rotary-embedding-torch/issues/18 ("caching frequency results
in RuntimeError: Trying to backward through the graph a second time"; computing the angles in
`forward()` every time worked; the library now caches the angles detached).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, SEQ = 20, 8, 6


def rotate_half(x):
    x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-1)
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000, learned_freq=False):
        super().__init__()
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
        self.freqs = nn.Parameter(freqs, requires_grad=learned_freq)
        self.learned_freq = learned_freq
        self.cache = {}

    def forward(self, seq_len):
        should_cache = not self.learned_freq
        if should_cache and seq_len in self.cache:
            return self.cache[seq_len]
        positions = torch.arange(seq_len, dtype=self.freqs.dtype)
        freqs = torch.einsum("i,f->if", positions, self.freqs).repeat_interleave(2, dim=-1)
        if should_cache:
            self.cache[seq_len] = freqs.detach()
        return freqs

    def rotate(self, t):
        freqs = self.forward(t.shape[-2])
        return t * freqs.cos() + rotate_half(t) * freqs.sin()


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.rotary = RotaryEmbedding(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        h = self.embed(ids)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q, k = self.rotary.rotate(q), self.rotary.rotate(k)
        h = h + F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.head(h)


model = TinyLM()
for p in model.parameters():  # fine-tune everything that was loaded
    p.requires_grad = True
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randint(0, VOCAB, (4, SEQ + 1))
losses = []
for step in range(3):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
