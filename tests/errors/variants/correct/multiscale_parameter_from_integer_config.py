from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class Config:
    features: int = 3
    init_scales: tuple = (1, 2, 4)


class MultiScale(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.scales = nn.Parameter(torch.tensor(config.init_scales, dtype=torch.float32))  # PRIMARY
        self.head = nn.Linear(config.features * len(config.init_scales), 1)

    def forward(self, x):
        return self.head(torch.cat([torch.tanh(x * s) for s in self.scales], dim=1))


torch.manual_seed(0)
model = MultiScale(Config())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
