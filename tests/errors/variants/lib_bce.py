import torch


def stable_bce(outputs, targets, eps=1e-6):
    """Binary cross-entropy of the probabilities the model put in its output dict."""
    probabilities = outputs["probabilities"]
    probabilities.clamp_(eps, 1 - eps)  # PRIMARY
    return -(targets * probabilities.log() + (1 - targets) * (1 - probabilities).log()).mean()
