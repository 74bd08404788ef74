# helper module of epoch_scores_concatenated_with_numpy.py (a held-out variant)
import numpy as np


def top_fraction_threshold(score_batches, fraction):
    """The score above which the top `fraction` of all examples seen this epoch lie."""
    scores = np.concatenate(score_batches)  # PRIMARY
    return float(np.quantile(scores, 1.0 - fraction))
