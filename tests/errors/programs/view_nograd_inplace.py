import torch

x = torch.randn(4, requires_grad=True)
h = x * 2
with torch.no_grad():  # NO_GRAD
    first = h[:2]  # VIEW
first.mul_(x[:2])  # PRIMARY
h.sum().backward()
