"""Training utilities kept apart from the loop (set 14 of the held-out variants)."""
import torch


def clip_gradients(parameters, max_norm):
    """Clip the gradients to max_norm; refuse to clip gradients that overflowed."""
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm, error_if_nonfinite=True)  # PRIMARY
