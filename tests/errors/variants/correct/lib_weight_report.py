"""Histograms of a model's weights (helper of weight_histogram_logged_with_numpy)."""
import numpy as np


def weight_histograms(model):
    histograms = {}
    for name, parameter in model.named_parameters():
        counts, _ = np.histogram(parameter.detach(), bins=4, range=(-1.0, 1.0))  # PRIMARY
        histograms[name] = counts.tolist()
    return histograms
