# helper module of score_threshold_from_numpy_percentile.py (a held-out variant)
import numpy as np


def calibrate_threshold(scores, quantile):
    """The score above which the top (100 - quantile) percent of the batch lies."""
    return float(np.percentile(scores, quantile))  # PRIMARY
