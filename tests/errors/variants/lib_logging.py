def mean_confidence(probabilities):
    """The mean of the highest class probability, for the progress bar."""
    probabilities.detach_()  # PRIMARY
    return probabilities.max(dim=1).values.mean().item()
