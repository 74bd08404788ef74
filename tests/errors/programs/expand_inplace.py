import torch

bias = torch.zeros(1, 3).expand(4, 3)  # PRIMARY
bias.add_(torch.randn(4, 3))  # RAISES
