"""Training a small GPT with gradient accumulation (karpathy/nanoGPT, `train.py`): each of the
`gradient_accumulation_steps` micro-batches calls `scaler.scale(loss).backward()` on its full mean
loss, so the accumulated gradient is the *sum* of the micro-batch gradients, not their mean, and is
then clipped with `clip_grad_norm_(model.parameters(), grad_clip)`. AdamW is scale-invariant, but
the clipping is not: the clip threshold is silently `gradient_accumulation_steps` times lower than
intended, and the updates differ from training on the whole batch. No error. The maintainer agreed
("You're right it should be, I'll issue a fix"): divide the loss by the number of accumulation
steps before backward (the logged loss is multiplied back).
Source: https://github.com/karpathy/nanoGPT/issues/168
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, BLOCK = 16, 16, 8
gradient_accumulation_steps = 4
grad_clip = 1.0


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(BLOCK, DIM)
        self.ln = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        x = x + self.mlp(self.ln(x))
        logits = self.lm_head(x)
        return logits, F.cross_entropy(logits.view(-1, VOCAB), targets.reshape(-1))


model = TinyGPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
scaler = torch.amp.GradScaler("cpu", enabled=False)
data = torch.randint(0, VOCAB, (64, BLOCK + 1))


def get_batch(i):
    batch = data[(8 * i) % 64:(8 * i) % 64 + 8]
    return batch[:, :-1], batch[:, 1:]


lossfs = []
X, Y = get_batch(0)
batch_i = 1
for iter_num in range(5):
    for micro_step in range(gradient_accumulation_steps):
        logits, loss = model(X, Y)
        loss = loss / gradient_accumulation_steps  # scale the loss to account for gradient accumulation
        X, Y = get_batch(batch_i)
        batch_i += 1
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    lossf = loss.item() * gradient_accumulation_steps
    lossfs.append(lossf)

result = {"losses": torch.tensor(lossfs), "params": [p.detach().clone() for p in model.parameters()]}
