"""Additive attention masks, used by padding_mask_broadcast_to_scores_then_causal_added."""
import torch


def padding_mask(lengths, steps):
    mask = torch.zeros(len(lengths), 1, steps)
    for row, length in enumerate(lengths):
        mask[row, 0, length:] = float("-inf")
    return torch.broadcast_to(mask, (len(lengths), steps, steps))  # PRIMARY
