import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
params = model.parameters()  # PRIMARY
opt = torch.optim.SGD(params, lr=0.1)
x = torch.randn(4, 3)
loss = model(x).pow(2).mean()
grads = torch.autograd.grad(loss, params)
