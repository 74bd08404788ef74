import torch

torch.manual_seed(0)
param = torch.randn(4, 4, requires_grad=True)
a = torch.randn(4, 1)
y = 0
b = torch.mm(param, a)
for i in range(4):
    bione = torch.zeros(4, 1)
    bione[i] = 1
    b = b + bione
    y = y + torch.mm(param, b)
y.sum().backward()
grads = [param.grad]
