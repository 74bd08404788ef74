# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 15
# trigger: a hand-written SGD loop calls model.zero_grad() (set_to_none=True by default) between
#   backward() and its update p -= lr * p.grad, so every gradient is None when it is read
# source: none found; the pattern as users write it (zero_grad placed right after backward)
# results: model, losses
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
lr = 0.1
losses = []
for step in range(3):
    x = torch.randn(6, 3)
    loss = model(x).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    model.zero_grad()  # PRIMARY
    losses.append(loss.item())
