"""Diffusion LM: the embedded token ids set to the ignore index in place for the reconstruction loss.
Source: https://github.com/thorinf/simple-diffusion-lm/issues/2 (`masked_fill` out of place)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, BATCH, LENGTH = 20, 8, 4, 10


class DiffusionLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM)
        self.estimator = nn.Sequential(nn.Linear(DIM + 1, 32), nn.GELU(), nn.Linear(32, DIM))

    def get_logits(self, x):
        return x @ self.embedding.weight.t()

    def compute_loss(self, ids, conditional_mask):
        x = self.embedding(ids)
        t = torch.rand(ids.shape[0], 1, 1).clamp(1e-5, 1 - 1e-5)
        gamma = torch.cos(t * torch.pi / 2) ** 2
        x_t = gamma.sqrt() * x + (1 - gamma).sqrt() * torch.randn_like(x)
        x_t = torch.where(conditional_mask.unsqueeze(-1), x, x_t)
        x_estimation = self.estimator(torch.cat([x_t, t.expand(-1, ids.shape[1], 1)], dim=-1))
        diff_mask = torch.logical_not(conditional_mask)
        loss_diff = ((x_estimation - x.detach()) ** 2).mean(-1)[diff_mask].mean()
        logits = self.get_logits(x_estimation)
        ids = ids.masked_fill(torch.logical_not(diff_mask), -100)
        loss_reconstruction = F.cross_entropy(logits.transpose(2, 1), ids, ignore_index=-100)
        return loss_diff + loss_reconstruction


model = DiffusionLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
losses = []
for step in range(3):
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH))
    conditional_mask = torch.arange(LENGTH).unsqueeze(0) < torch.randint(1, 4, (BATCH, 1))
    loss = model.compute_loss(ids, conditional_mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
