"""A symmetric-weight layer through torch.nn.utils.parametrize."""
import torch
from torch import nn
from torch.nn.utils import parametrize


class Symmetric(nn.Module):
    def forward(self, weight):
        return weight.triu() + weight.triu(1).transpose(0, 1)


def symmetric_linear(features):
    layer = nn.Linear(features, features)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    return layer
