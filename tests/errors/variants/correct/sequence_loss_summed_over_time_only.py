# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 11
# trigger: a sequence tagger's Trainer-like step masks the per-token cross-entropy
#   (reduction="none") and sums it over time with .sum(dim=1) to get one loss per sequence, then
#   divides by the lengths and calls backward() on that per-sequence vector
# source: none found; the pattern as users write it (masked sequence losses reduced over one
#   dimension only)
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TaggerTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses = []

    def training_step(self, tokens, tags, mask):
        self.optimizer.zero_grad()
        logits = self.model(tokens)
        per_token = F.cross_entropy(logits.transpose(1, 2), tags, reduction="none") * mask
        loss = (per_token.sum(dim=1) / mask.sum(dim=1)).mean()  # PRIMARY
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.detach().mean().item())


torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(7, 4), nn.Linear(4, 3))
trainer = TaggerTrainer(model)
tokens, tags = torch.randint(0, 7, (2, 5)), torch.randint(0, 3, (2, 5))
mask = torch.tensor([[1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
for _ in range(2):
    trainer.training_step(tokens, tags, mask)
