# helper module of hand_written_softmax_normalised_in_place.py (a held-out variant)


def stable_softmax(logits):
    """Softmax over the last dimension, shifted by the maximum for numerical stability."""
    e = (logits - logits.max(-1, keepdim=True).values).exp()
    e = e / e.sum(-1, keepdim=True)  # PRIMARY
    return e
