# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 3
# trigger: a Trainer-like class steps through GradScaler in its optimizer_step hook and calls
#   scaler.update() only in its epoch-end hook
# source: none found; the pattern as users write it
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu")
        self.losses = []

    def optimizer_step(self):
        self.scaler.step(self.optimizer)  # PRIMARY
        self.scaler.update()

    def on_epoch_end(self):
        pass

    def fit(self, batches, epochs):
        for _ in range(epochs):
            for x, y in batches:
                self.optimizer.zero_grad()
                loss = F.mse_loss(self.model(x), y)
                self.scaler.scale(loss).backward()
                self.optimizer_step()
                self.losses.append(loss.item())
            self.on_epoch_end()


torch.manual_seed(0)
model = nn.Linear(3, 1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
trainer = Trainer(model)
trainer.fit(batches, epochs=2)
