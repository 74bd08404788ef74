import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
scale = torch.tensor([3.0, 4.0, 5.0])  # PRIMARY
y = (x * scale).sum()
gx, gs = torch.autograd.grad(y, [x, scale])  # RAISES
