import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x * 2  # MADE
y.requires_grad_(False)  # PRIMARY
