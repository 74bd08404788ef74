"""Activations computed in NumPy (library module of a set 22 variant)."""
import numpy as np
import torch


def np_tanh(x):
    return torch.from_numpy(np.tanh(x.detach().numpy()))  # PRIMARY
