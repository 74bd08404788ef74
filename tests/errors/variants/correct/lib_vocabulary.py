import torch
from torch import nn


def add_tokens(model, count):
    """Grow the embedding by `count` rows, started at the mean of the existing rows."""
    weight = model.embedding.weight
    known = weight.shape[0]
    mean = weight.detach().mean(0)
    model.embedding.weight = nn.Parameter(torch.cat([weight.detach(), mean.expand(count, -1)]))  # PRIMARY
    model.embedding.num_embeddings = known + count
