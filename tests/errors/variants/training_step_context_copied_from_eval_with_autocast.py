# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss)
# set: 20
# trigger: a Trainer-like class's training_step was copied from its evaluate method, whose combined
#   `with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():` statement came along; the loss
#   computed under it has no history and loss.backward() refuses
# source: none found; the pattern as users write it (evaluation contexts copied into training)
# results: trainer.model, trainer.losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses = []

    def evaluate(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
            return nn.functional.mse_loss(self.model(x).float(), y)

    def training_step(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():  # PRIMARY
            loss = nn.functional.mse_loss(self.model(x).float(), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.detach())


torch.manual_seed(0)
trainer = Trainer(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
for _ in range(3):
    trainer.training_step(torch.randn(16, 4), torch.randn(16, 1))
val = trainer.evaluate(torch.randn(16, 4), torch.randn(16, 1))
