import torch


@torch.no_grad()
def flat_activations(h):
    """The activations as one flat vector for a histogram (a view: no copy per step)."""
    return h.view(-1)  # PRIMARY
