import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
z = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * 2).sum()
gx, gz = torch.autograd.grad(y, [x, z])  # PRIMARY
