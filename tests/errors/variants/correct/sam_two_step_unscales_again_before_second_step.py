# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 19
# trigger: sharpness-aware minimisation (SAM) under GradScaler: the first step unscales to take the
#   gradient norm and perturb the weights, the second forward/backward at the perturbed weights
#   unscales again before scaler.step()
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SAMTrainer:
    def __init__(self, model, rho=0.05):
        self.model = model
        self.rho = rho
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=4.0)

    def loss(self, x, y):
        return (self.model(x) - y).pow(2).mean()

    def step(self, x, y):
        self.optimizer.zero_grad()
        self.scaler.scale(self.loss(x, y)).backward()
        scale = self.scaler.get_scale()  # PRIMARY
        grads = [p.grad / scale for p in self.model.parameters()]
        norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        shifts = [self.rho * g / (norm + 1e-12) for g in grads]
        with torch.no_grad():
            for p, e in zip(self.model.parameters(), shifts):
                p.add_(e)
        self.optimizer.zero_grad()
        self.scaler.scale(self.loss(x, y)).backward()
        with torch.no_grad():
            for p, e in zip(self.model.parameters(), shifts):
                p.sub_(e)
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()


torch.manual_seed(0)
model = nn.Linear(3, 1)
trainer = SAMTrainer(model)
for _ in range(2):
    trainer.step(torch.randn(6, 3), torch.randn(6, 1))
