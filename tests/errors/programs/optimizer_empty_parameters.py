import torch
from torch import nn

model = nn.Linear(3, 1)
params = model.parameters()  # PRIMARY
count = sum(p.numel() for p in params)
opt = torch.optim.SGD(params, lr=0.1)  # RAISES
