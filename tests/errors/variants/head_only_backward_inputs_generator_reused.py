# message: 'inputs' argument to backward() cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 6
# trigger: a Trainer that trains only the head keeps model.head.parameters() (a generator) on
#   self and calls loss.backward(inputs=list(self.head_parameters)) each step; the second step
#   finds the generator used up
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


class HeadTrainer:
    def __init__(self, model):
        self.model = model
        self.head_parameters = model.head.parameters()  # PRIMARY
        self.optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward(inputs=list(self.head_parameters))
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
model = Model()
trainer = HeadTrainer(model)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = [trainer.step(x, y) for _ in range(2)]
