import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = torch.sigmoid(x)
values = y.numpy()  # PRIMARY
