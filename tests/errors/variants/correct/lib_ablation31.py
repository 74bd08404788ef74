"""Activation ablations applied to a built model with model.apply()."""
from torch import nn


def make_leaky_slope(slope):
    def set_slope(module):
        if isinstance(module, nn.LeakyReLU):
            module.negative_slope = slope  # PRIMARY
            module.inplace = False
    return set_slope
