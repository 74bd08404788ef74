def gradient_norms(model):
    """The norm of every parameter's gradient, for the training dashboard."""
    return {name: parameter.grad.norm().item() for name, parameter in model.named_parameters()  # PRIMARY
            if parameter.grad is not None}
