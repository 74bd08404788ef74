def mean_confidence(probabilities):
    """The mean of the highest class probability, for the progress bar."""
    probabilities = probabilities.detach()  # PRIMARY
    return probabilities.max(dim=1).values.mean().item()
