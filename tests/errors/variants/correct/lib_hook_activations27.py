"""Activations attached by forward hooks, for forward_hook_applies_leaky_relu_in_place_with_negative_slope."""
import functools

import torch.nn.functional as F


def _leaky(module, inputs, output, slope):
    return F.leaky_relu(output, slope)  # PRIMARY


def attach_activations(model, config):
    """Gives every nn.Linear of `model` but the last the activation the config names, as a forward hook."""
    linears = [module for module in model.modules() if module.__class__.__name__ == "Linear"]
    for linear in linears[:-1]:
        linear.register_forward_hook(functools.partial(_leaky, slope=config["slope"]))
