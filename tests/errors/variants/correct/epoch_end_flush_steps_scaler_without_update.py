# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 19
# trigger: gradient accumulation with GradScaler: the trainer's optimizer_step() steps and updates, but
#   the end-of-epoch flush of a leftover partial accumulation calls scaler.step() itself and forgets
#   scaler.update(), so the next epoch's first step refuses
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class AccumulatingTrainer:
    def __init__(self, model, every):
        self.model = model
        self.every = every
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
        self.pending = 0

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        self.pending = 0

    def flush(self):
        if self.pending:
            self.scaler.step(self.optimizer)  # PRIMARY
            self.scaler.update()
            self.optimizer.zero_grad()
            self.pending = 0

    def train_epoch(self, batches):
        for x, y in batches:
            loss = (self.model(x) - y).pow(2).mean() / self.every
            self.scaler.scale(loss).backward()
            self.pending += 1
            if self.pending == self.every:
                self.optimizer_step()
        self.flush()


torch.manual_seed(0)
model = nn.Linear(3, 1)
trainer = AccumulatingTrainer(model, every=2)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for epoch in range(2):
    trainer.train_epoch(data)
