import torch

labels = torch.arange(3)
labels.requires_grad_()  # PRIMARY
