# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# set: 5
# trigger: after each optimizer step, a Trainer-like class snaps every weight to a grid of 1/8
#   with a Python function through apply_, inside torch.no_grad() (which does not help)
# source: none found; the pattern as users write it
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


def snap(value):
    return round(value * 8) / 8


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses = []

    def quantise(self):
        with torch.no_grad():
            for p in self.model.parameters():
                p.detach().apply_(snap)  # PRIMARY

    def fit(self, x, y, steps):
        for _ in range(steps):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.quantise()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Linear(3, 1)
trainer = Trainer(model)
trainer.fit(torch.randn(5, 3), torch.randn(5, 1), steps=2)
