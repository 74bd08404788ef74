import torch

x = torch.randn(3, requires_grad=True)
y = x * 2  # MADE
y.requires_grad_(False)  # PRIMARY
