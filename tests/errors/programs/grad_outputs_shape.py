import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x * 2).sum()
(gx,) = torch.autograd.grad(y, x, grad_outputs=torch.ones(3))  # PRIMARY
