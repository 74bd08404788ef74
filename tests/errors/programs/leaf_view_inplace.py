import torch

w = torch.zeros(2, 3, requires_grad=True)
row = w[0]
row.add_(1.0)  # PRIMARY
