"""Losses for imbalanced detection targets."""
import torch


def binary_focal_loss(logits, targets, alpha=0.25, gamma=0.5):
    """Focal loss of Lin et al. on sigmoid probabilities, averaged over the elements."""
    probs = torch.sigmoid(logits)
    p_t = probs * targets + (1 - probs) * (1 - targets)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    ce = -torch.log(p_t.clamp(min=1e-12))
    modulator = (1 - p_t) ** gamma  # PRIMARY
    return (alpha_t * modulator * ce).mean()
