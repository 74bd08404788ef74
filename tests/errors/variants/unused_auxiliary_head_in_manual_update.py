# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 5
# trigger: a model keeps an auxiliary head that its forward does not use in this phase of
#   training; a Trainer-like class's hand-written SGD step multiplies the learning rate by every
#   parameter's .grad, which is None for that head
# source: none found; the pattern as users write it
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class WithAuxiliary(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)
        self.auxiliary = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


class Trainer:
    def __init__(self, model, lr):
        self.model, self.lr = model, lr
        self.losses = []

    def sgd_step(self):
        with torch.no_grad():
            for p in self.model.parameters():
                p -= self.lr * p.grad  # PRIMARY
                p.grad = None

    def fit(self, x, y, steps):
        for _ in range(steps):
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.sgd_step()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = WithAuxiliary()
trainer = Trainer(model, lr=0.1)
trainer.fit(torch.randn(5, 3), torch.randn(5, 1), steps=2)
