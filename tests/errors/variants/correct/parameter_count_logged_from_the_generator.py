# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 8
# trigger: a Trainer-like class keeps model.parameters() in a variable, logs the number of trainable
#   values by summing over it, then gives the same (now exhausted) generator to the optimizer
# source: none found; the pattern as users write it (a parameter count printed before training)
# results: trainer.n_parameters, trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        parameters = list(model.parameters())  # PRIMARY
        self.n_parameters = sum(p.numel() for p in parameters)
        self.optimizer = torch.optim.AdamW(parameters, lr=1e-2)
        self.losses = []

    def fit(self, x, y, steps):
        for _ in range(steps):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
trainer = Trainer(model)
trainer.fit(torch.randn(6, 3), torch.randn(6, 1), steps=2)
