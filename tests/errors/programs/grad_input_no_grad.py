import torch

x = torch.randn(3, requires_grad=True)
scale = torch.randn(3)
y = (x * scale).sum()
gx, gs = torch.autograd.grad(y, [x, scale])  # PRIMARY
