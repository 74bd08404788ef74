import torch

x = torch.randn(3)
y = x * 2
y.retain_grad()  # PRIMARY
