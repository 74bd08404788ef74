"""An activation that keeps positive values and mirrors negative ones, scaled (helper of
leaky_relu_function_in_place_with_negative_slope)."""
import torch.nn.functional as F


def mirrored_relu(h):
    return F.leaky_relu_(h, -0.5)  # PRIMARY
