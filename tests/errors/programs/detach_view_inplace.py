import torch

x = torch.randn(4, 3, requires_grad=True)
h = x * 2
row = h[0]  # VIEW
row.detach_()  # PRIMARY
h.sum().backward()
