"""Random probe vectors for trace estimators."""
import torch


def rademacher_like(x):
    signs = (torch.rand(x.shape) < 0.5).int()  # PRIMARY
    return signs * 2 - 1
