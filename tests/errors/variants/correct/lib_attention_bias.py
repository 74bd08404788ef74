"""Attention scores for one query (set 14 of the held-out variants)."""


def attention_weights(query, keys, bias):
    """Softmax of the scaled dot products, shifted by a learned relative-position bias."""
    scores = bias + query @ keys.T / keys.shape[-1] ** 0.5  # PRIMARY
    return scores.softmax(-1)
