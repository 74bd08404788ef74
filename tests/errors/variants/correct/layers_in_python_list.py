# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# trigger: a model keeps its layers in a plain Python list, so model.parameters() is empty when
#   it is handed to the optimizer
# source: https://www.engineermaxxing.com/micro/lessons/pytorch-internals.html
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 4), nn.Linear(4, 1)])  # PRIMARY

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


torch.manual_seed(0)
model = MLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    losses.append(loss.item())
    loss.backward()
    optimizer.step()
