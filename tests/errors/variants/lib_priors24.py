"""A learned Gaussian prior for a latent-variable model."""
import torch
from torch import nn
from torch.distributions import Independent, Normal


class LearnedPrior(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.dist = Independent(Normal(self.loc, self.log_scale.exp()), 1)  # PRIMARY

    def log_prob(self, z):
        return self.dist.log_prob(z)
