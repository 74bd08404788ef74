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
        self.head_parameters = list(model.head.parameters())  # PRIMARY
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
