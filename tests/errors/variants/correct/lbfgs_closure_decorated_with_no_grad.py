import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
t = torch.linspace(0, 1, 12).unsqueeze(1)
target = torch.sin(3 * t)


def closure():  # PRIMARY
    optimizer.zero_grad()
    loss = (model(t) - target).pow(2).mean()
    loss.backward()
    return loss


losses = []
for _ in range(2):
    losses.append(optimizer.step(closure).item())
