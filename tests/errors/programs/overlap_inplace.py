import torch

a = torch.arange(9.0).reshape(3, 3)
a.T.add_(a)  # PRIMARY
