import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x * x
y.backward()  # PRIMARY
