"""Language-model trainer that evaluates before and between training epochs
(snowflakedb/ArcticTraining, trainer.py): `evaluate()` was decorated with
`@torch.inference_mode()`. A tensor the model builds once and keeps (in the report, the parameters
DeepSpeed ZeRO-3 gathers and keeps; here, a rotary-position cache filled on first use) was first
built during that evaluation, so it is an inference tensor; the next training forward multiplies
the queries by it, autograd has to save it, and PyTorch refuses.
Source: https://github.com/snowflakedb/ArcticTraining/pull/265 ("RuntimeError: Inference tensors
cannot be saved for backward" when mixing train and eval; merged fix: replace
`torch.inference_mode` with `torch.no_grad` on evaluate()).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH = 20, 16, 6, 3


class RotaryCache(nn.Module):
    """cos/sin tables for rotary positions, computed once for the longest sequence seen."""

    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.cos = self.sin = None

    def forward(self, length):
        if self.cos is None or self.cos.shape[0] < length:
            angles = torch.outer(torch.arange(length).float(), self.inv_freq)
            angles = torch.cat([angles, angles], dim=-1)
            self.cos, self.sin = angles.cos(), angles.sin()
        return self.cos[:length], self.sin[:length]


def rotate(x, cos, sin):
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.rotary = RotaryCache(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        hidden = self.embed(tokens)
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        cos, sin = self.rotary(tokens.shape[1])
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.lm_head(hidden + attended)


def lm_loss(model, tokens):
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


@torch.no_grad()
def evaluate(model, batches):
    model.eval()
    loss = torch.stack([lm_loss(model, tokens) for tokens in batches]).mean()
    model.train()
    return loss.clone()


model = TinyCausalLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
train_batches = [torch.randint(0, VOCAB, (BATCH, SEQ + 1)) for _ in range(3)]
eval_batches = [torch.randint(0, VOCAB, (BATCH, SEQ + 1)) for _ in range(2)]

eval_losses = [evaluate(model, eval_batches)]
losses = []
for epoch in range(2):
    for tokens in train_batches:
        optimizer.zero_grad()
        loss = lm_loss(model, tokens)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    eval_losses.append(evaluate(model, eval_batches))

result = {"losses": torch.stack(losses), "eval_losses": torch.stack(eval_losses),
          "params": [p.detach().clone() for p in model.parameters()]}
