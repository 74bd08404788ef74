import torch

a = torch.arange(6.0).reshape(2, 3)
a.T.add_(a)  # PRIMARY
