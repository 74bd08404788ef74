import torch

x = torch.randn(3, requires_grad=True)
y = (x * 2).sum()
(gx,) = torch.autograd.grad(y, x, grad_outputs=torch.ones(3))  # PRIMARY
