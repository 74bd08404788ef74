"""Regularisers applied as gradient hooks."""


def add_l2_gradient_hook(parameter, weight_decay):
    """Add weight_decay * parameter to every gradient the parameter receives."""

    def add_l2(grad):
        if grad.is_sparse:
            grad = grad.coalesce()
            return grad + weight_decay * parameter.detach().sparse_mask(grad)
        return grad + weight_decay * parameter.detach()

    return parameter.register_hook(add_l2)  # PRIMARY
