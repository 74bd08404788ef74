# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 3
# trigger: a loss helper makes the predictions ([batch, 1]) the shape of the targets ([batch])
#   with the method spelling pred.resize_as_(target)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn


def regression_loss(pred, target):
    pred.resize_as_(target)  # PRIMARY
    return (pred - target).abs().mean()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = regression_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
