import torch
from torch import nn

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.weight, lr=0.1)  # PRIMARY
