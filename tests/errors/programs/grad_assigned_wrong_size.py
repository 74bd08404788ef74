import torch

w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros(2)  # PRIMARY
