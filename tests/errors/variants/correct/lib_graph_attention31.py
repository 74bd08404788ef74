"""Graph-attention helpers."""


def add_score_bias(scores, bias):
    scores = scores + bias  # PRIMARY
    return scores
