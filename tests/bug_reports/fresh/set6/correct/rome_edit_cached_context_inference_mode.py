"""Knowledge editing of a language model with ROME: before optimizing the new value vector, the
editor encodes the context templates once and records the initial values under
`torch.inference_mode()`; the optimization then attends to those cached keys and values, and the
product `query @ keys.T` saves the keys for backward, inference tensors.
Source: https://github.com/hiyouga/FastEdit/issues/26 ("Recording initial value of v*" ...
"Inference tensors cannot be saved for backward"; marked solved: what is recorded before the
optimization must be computed under `torch.no_grad()`, not in inference mode).
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM = 40, 16


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 32), nn.GELU(), nn.Linear(32, DIM))
        self.q, self.k, self.v = nn.Linear(DIM, DIM), nn.Linear(DIM, DIM), nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def encode_context(self, context_tokens):
        c = self.embed(context_tokens).mean(1)
        return self.k(c), self.v(c)

    def forward(self, tokens, context, delta=None):
        h = self.embed(tokens).mean(1)
        out = self.mlp(h)
        if delta is not None:
            out = out + delta
        h = h + out
        keys, values = context
        attn = torch.softmax(self.q(h) @ keys.t() / math.sqrt(DIM), dim=-1)
        return self.lm_head(h + attn @ values)


model = TinyLM()
for p in model.parameters():
    p.requires_grad_(False)
prompts = torch.randint(0, VOCAB, (4, 5))
context_templates = torch.randint(0, VOCAB, (6, 5))
target = torch.full((4,), 7)


def compute_v(model, steps=5, weight_decay=0.5):
    with torch.no_grad():
        context = model.encode_context(context_templates)
        init_logits = model(prompts, context)
    delta = torch.zeros(DIM, requires_grad=True)
    optimizer = torch.optim.Adam([delta], lr=0.5)
    losses = []
    for _ in range(steps):
        nll = F.cross_entropy(model(prompts, context, delta), target)
        loss = nll + weight_decay * delta.norm() ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return delta.detach(), losses, init_logits.clone()


delta, losses, init_logits = compute_v(model)
result = {"delta": delta, "losses": losses, "init_logits": init_logits}
