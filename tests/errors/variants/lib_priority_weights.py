import torch


def importance_weights(td_errors, stale, temperature=1.0):
    """Weights of a prioritised replay batch: exp(-|td| / T), stale transitions weighted 0."""
    weights = torch.exp(-td_errors.abs() / temperature)
    weights.index_put_((stale,), torch.tensor(0.0))  # PRIMARY
    return weights
