"""Prototype assignment, used by prototype_assignment_by_numpy_argmin_in_lib."""
import numpy as np
import torch


def nearest_prototype(cost):
    return torch.from_numpy(np.argmin(cost, axis=1))  # PRIMARY
