"""Fan-in scaled initialisation (helper of manual_sgd_weights_from_fan_in_init_helper_in_lib)."""
import math

import torch


def init_weight(fan_in, fan_out):
    return torch.randn(fan_in, fan_out, requires_grad=True) / math.sqrt(fan_in)  # PRIMARY
