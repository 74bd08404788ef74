# helper module of optimizer_hooks_after_accumulation_on_frozen_parameters.py (a held-out variant)
import torch


def step_in_backward(model, lr):
    """Update each parameter as soon as its gradient is accumulated, then free the gradient."""
    def update(parameter):
        with torch.no_grad():
            parameter -= lr * parameter.grad
        parameter.grad = None

    for parameter in model.parameters():
        if parameter.requires_grad:
            parameter.register_post_accumulate_grad_hook(update)  # PRIMARY
