def clamp_gradients(model, limit):
    """Clamp every parameter's gradient as backward() computes it."""
    for parameter in model.parameters():
        if parameter.requires_grad:
            parameter.register_hook(lambda grad: grad.clamp(-limit, limit))  # PRIMARY
