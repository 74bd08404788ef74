import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = torch.sigmoid(x)
y[0] = 0.0  # PRIMARY
y.sum().backward()
