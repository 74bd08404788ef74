import torch

x = torch.randn(3, requires_grad=True)
z = torch.randn(3, requires_grad=True)
y = (x * 2).sum()
gx, gz = torch.autograd.grad(y, [x, z])  # PRIMARY
