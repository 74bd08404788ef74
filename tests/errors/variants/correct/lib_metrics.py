# helper module of numpy_of_predictions_in_metric_helper.py (a held-out variant)
import torch


def accuracy(logits, labels):
    probabilities = torch.softmax(logits, dim=-1).detach().numpy()  # PRIMARY
    return float((probabilities.argmax(-1) == labels.numpy()).mean())
