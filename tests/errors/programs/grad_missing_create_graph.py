import torch

x = torch.randn(3, requires_grad=True)
y = (x ** 3).sum()
(gx,) = torch.autograd.grad(y, x)  # PRIMARY
penalty = gx.pow(2).sum()
penalty.backward()  # RAISES
