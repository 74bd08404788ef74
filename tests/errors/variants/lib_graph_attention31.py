"""Graph-attention helpers."""


def add_score_bias(scores, bias):
    scores += bias  # PRIMARY
    return scores
