"""Regularisers applied as gradient hooks."""


def add_l2_gradient_hook(parameter, weight_decay):
    """Add weight_decay * parameter to every gradient the parameter receives."""
    return parameter.register_hook(lambda grad: grad + weight_decay * parameter.detach())  # PRIMARY
