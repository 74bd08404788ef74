# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 3
# trigger: a Trainer-like class unscales in its clipping hook and again in a gradient-norm
#   logging hook that runs after it, before scaler.step()
# source: https://github.com/huggingface/transformers/issues/23905 (the message from a Trainer)
# results: trainer.losses, trainer.norms, model
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, max_norm):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu")
        self.max_norm = max_norm
        self.losses, self.norms = [], []

    def clip(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)

    def log_grad_norm(self):
        self.scaler.unscale_(self.optimizer)  # PRIMARY
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in self.model.parameters()]))
        self.norms.append(norm.item())

    def fit(self, batches):
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            self.scaler.scale(loss).backward()
            self.clip()
            self.log_grad_norm()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Linear(3, 1)
batches = [(torch.randn(4, 3), torch.randn(4, 1) * 3) for _ in range(3)]
trainer = Trainer(model, max_norm=0.5)
trainer.fit(batches)
