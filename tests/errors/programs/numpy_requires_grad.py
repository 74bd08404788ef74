import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
values = y.numpy()  # PRIMARY
