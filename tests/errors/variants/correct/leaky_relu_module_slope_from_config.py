import torch
from torch import nn
import torch.nn.functional as F

config = {"hidden": 8, "slope": -0.3, "inplace": True}


def build_model(config):
    return nn.Sequential(
        nn.Linear(4, config["hidden"]),
        nn.LeakyReLU(config["slope"]),  # PRIMARY
        nn.Linear(config["hidden"], 1),
    )


torch.manual_seed(0)
model = build_model(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
