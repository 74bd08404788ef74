"""A softmax-like `torch.distributions` transform (the Boltzmann transform of
the report) exponentiates its input and then normalises the result in place
(`probs /= probs.sum(-1, True)`); `exp` keeps its result for backward, so any
loss backpropagated through a sample of the transformed distribution fails
("modified by an inplace operation").  PyTorch's fix made the ops out of
place.
Source: https://github.com/pytorch/pytorch/pull/5842"""
import torch
import torch.nn as nn
from torch.distributions import Normal, TransformedDistribution, constraints
from torch.distributions.transforms import Transform


class BoltzmannTransform(Transform):
    domain = constraints.real_vector
    codomain = constraints.simplex
    event_dim = 1

    def __eq__(self, other):
        return isinstance(other, BoltzmannTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        probs /= probs.sum(-1, True)  # expect: ADL001
        return probs


class MixturePolicy(nn.Module):
    def __init__(self, obs_dim=4, n_components=3):
        super().__init__()
        self.loc = nn.Linear(obs_dim, n_components)
        self.log_scale = nn.Parameter(torch.zeros(n_components))

    def forward(self, obs):
        base = Normal(self.loc(obs), self.log_scale.exp())
        return TransformedDistribution(base, [BoltzmannTransform()])


def run():
    torch.manual_seed(0)
    policy = MixturePolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    weights = policy(torch.randn(5, 4)).rsample()
    loss = (weights * torch.randn(5, 3)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
