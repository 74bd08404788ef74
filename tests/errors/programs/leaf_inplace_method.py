import torch

w = torch.ones(3, requires_grad=True)
w.mul_(2)  # PRIMARY
