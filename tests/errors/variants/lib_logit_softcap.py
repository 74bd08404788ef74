"""Logit soft-capping (tanh), as in recent language models."""
import torch


def softcap(logits, cap):
    capped = torch.tanh(logits / cap)
    capped.mul_(cap)  # PRIMARY
    return capped
