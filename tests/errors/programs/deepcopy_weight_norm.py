import copy

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.utils.weight_norm(nn.Linear(3, 4)), nn.Tanh(), nn.Linear(4, 1))  # PRIMARY
x = torch.randn(5, 3)
loss = model(x).pow(2).mean()
loss.backward()
ema = copy.deepcopy(model)
