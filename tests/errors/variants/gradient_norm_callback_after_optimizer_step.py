# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 7
# trigger: a Trainer-like loop calls its callbacks' on_after_step hook after scaler.step(); a
#   gradient-norm logging callback unscales there to log the true norm, before scaler.update()
# source: none found; the pattern as users write it (Lightning's on_before_optimizer_step is the
#   right hook)
# results: trainer.losses, norms.values, model
import torch
from torch import nn
import torch.nn.functional as F


class GradNormLogger:
    def __init__(self):
        self.values = []

    def on_before_step(self, trainer):
        pass

    def on_after_step(self, trainer):
        trainer.scaler.unscale_(trainer.optimizer)  # PRIMARY
        self.values.append(sum(p.grad.norm().item() for p in trainer.model.parameters()))


class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu")
        self.callbacks = callbacks
        self.losses = []

    def fit(self, x, y, steps):
        for _ in range(steps):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            self.scaler.scale(loss).backward()
            for callback in self.callbacks:
                callback.on_before_step(self)
            self.scaler.step(self.optimizer)
            for callback in self.callbacks:
                callback.on_after_step(self)
            self.scaler.update()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Linear(3, 1)
norms = GradNormLogger()
trainer = Trainer(model, [norms])
trainer.fit(torch.randn(4, 3), torch.randn(4, 1), 2)
