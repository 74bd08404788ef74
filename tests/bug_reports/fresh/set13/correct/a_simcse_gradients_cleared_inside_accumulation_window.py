"""Unsupervised SimCSE fine-tuning of a sentence encoder with gradient accumulation: each
micro-batch is encoded twice with dropout, the InfoNCE loss is divided by
`gradient_accumulation_steps` and backpropagated, and the optimizer steps every
`gradient_accumulation_steps` micro-batches. But `optimizer.zero_grad()` is also called at the top
of every micro-batch, so each step sees only the gradient of the last micro-batch (scaled down by
the accumulation factor) instead of the sum over the window; the other micro-batches are thrown
away. Nothing raises.
Source: https://github.com/bhuvanakundumani/SimCSE_unsupervised/issues/1 ("why zero_grad twice?":
`optimizer.zero_grad()` at every step and `model.zero_grad()` after `optimizer.step()`; "wouldn't
calling optimizer.zero_grad() clear the previous gradients that might not have been used for the
update yet?"); the correct version clears gradients only after each optimizer step.
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, SEQ, BATCH, ACCUM, MICRO = 40, 16, 6, 4, 2, 6
TEMPERATURE = 0.05


class SentenceEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HID)
        self.dropout = nn.Dropout(0.3)
        self.proj = nn.Linear(HID, HID)

    def forward(self, input_ids):
        h = self.dropout(self.embed(input_ids)).mean(dim=1)
        return self.proj(h)


model = SentenceEncoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
batches = [torch.randint(0, VOCAB, (BATCH, SEQ)) for _ in range(MICRO)]
losses = []
optimizer.zero_grad()
for step, input_ids in enumerate(batches):
    z1 = model(input_ids)
    z2 = model(input_ids)
    sim = F.cosine_similarity(z1.unsqueeze(1), z2.unsqueeze(0), dim=-1) / TEMPERATURE
    loss = F.cross_entropy(sim, torch.arange(BATCH))
    loss = loss / ACCUM
    loss.backward()
    losses.append(loss.detach())
    if (step + 1) % ACCUM == 0:
        optimizer.step()
        model.zero_grad()

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
