import torch
from torch.utils.checkpoint import checkpoint

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = checkpoint(torch.sin, x, use_reentrant=True)  # PRIMARY
(gx,) = torch.autograd.grad(y.sum(), x)  # RAISES
