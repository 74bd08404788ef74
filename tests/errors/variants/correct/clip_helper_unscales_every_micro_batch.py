# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 8
# helpers: lib_amp_clip.py
# trigger: a Trainer-like class accumulates gradients over two micro-batches with GradScaler and
#   calls a clipping helper from another file (which unscales, then clips) after every micro-batch's
#   backward(), not only before the step
# source: none found; the pattern as users write it (the AMP examples' "gradient accumulation"
#   and "gradient clipping" recipes combined)
# results: trainer.losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_amp_clip import clip_gradients  # noqa: E402


class Trainer:
    def __init__(self, model, accumulate):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu")
        self.accumulate = accumulate
        self.losses = []

    def fit(self, batches):
        for index, (x, y) in enumerate(batches):
            loss = F.mse_loss(self.model(x), y) / self.accumulate
            self.scaler.scale(loss).backward()
            if (index + 1) % self.accumulate == 0:
                clip_gradients(self.scaler, self.optimizer, self.model.parameters(), 1.0)  # PRIMARY
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
trainer = Trainer(model, accumulate=2)
trainer.fit([(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)])
