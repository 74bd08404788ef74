import torch

w = torch.randn(3, requires_grad=True) * 0.01  # PRIMARY
opt = torch.optim.SGD([w], lr=0.1)  # RAISES
