# helper module of smoothed_targets_from_broadcast_tensors_scaled_in_place.py (a held-out variant)
import torch
import torch.nn.functional as F


def smoothed_bce(logits, targets, smoothing):
    logits, targets = torch.broadcast_tensors(logits, targets)
    targets = targets.clone()  # PRIMARY
    targets.mul_(1 - smoothing).add_(smoothing / 2)
    return F.binary_cross_entropy_with_logits(logits, targets)
