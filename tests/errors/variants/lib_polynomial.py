import torch


def polynomial_features(x):
    """[1, x, x^2] of one scalar input, for the per-sample regression."""
    features = torch.empty(3)  # PRIMARY
    features[0] = 1.0
    features[1] = x
    features[2] = x * x
    return features
