import torch

w = torch.zeros(3, requires_grad=True)
w[0] = 1.0  # PRIMARY
