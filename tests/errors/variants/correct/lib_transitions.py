# helper module of consecutive_step_products_written_over_shifted_slices.py (a held-out variant)
import torch


def consecutive_products(probabilities):
    """Each step's probability times the previous step's (the first step kept as it is), as NumPy's
    `p[1:] *= p[:-1]` computes it."""
    return torch.cat([probabilities[:1], probabilities[1:] * probabilities[:-1]])  # PRIMARY
