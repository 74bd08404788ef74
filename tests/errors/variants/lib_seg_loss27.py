"""A segmentation loss for segmentation_logits_resize_as_label_map."""
import torch.nn.functional as F


def mask_loss(logits, mask):
    """Binary cross-entropy between one-channel logits [N, 1, H, W] and a label map [N, H, W]."""
    logits = logits.resize_as_(mask)  # PRIMARY
    return F.binary_cross_entropy_with_logits(logits, mask)
