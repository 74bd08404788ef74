import torch

bias = torch.zeros(1, 3).expand(4, 3)  # PRIMARY
bias.add_(torch.arange(12.0).reshape(4, 3))  # RAISES
