"""A NoisyNet layer resamples its noise in `forward`,
`self.eps_weight.normal_()`, on a buffer that the product
`self.noise_weight * self.eps_weight` saves for the backward (the gradient
of `noise_weight` is `eps_weight`).  Calling the layer twice before one
backward, as a double-DQN update does for the current and the next state,
resamples the buffer in place between the first forward and the backward:
backward fails ("modified by an inplace operation").  The report met it
through DataParallel's replicas; the error is the same on one device.  The
fix samples into a fresh tensor (`torch.randn_like(self.eps_weight)`) or
resamples once per update outside `forward`.
Buggy line: `self.eps_weight.normal_()` in `NoisyLinear.forward`.
Source: https://github.com/pytorch/pytorch/issues/11742"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, sigma0=0.5):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.noise_weight = nn.Parameter(torch.full((out_features, in_features), sigma0 * bound))
        self.noise_bias = nn.Parameter(torch.full((out_features,), sigma0 * bound))
        self.register_buffer("eps_weight", torch.zeros(out_features, in_features))
        self.register_buffer("eps_bias", torch.zeros(out_features))

    def forward(self, input):
        weight = self.weight + self.noise_weight * self.eps_weight.normal_()  # missed: none
        bias = self.bias + self.noise_bias * self.eps_bias.normal_()
        return F.linear(input, weight, bias)


class NoisyQNetwork(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.fc = nn.Linear(obs_dim, 16)
        self.out = NoisyLinear(16, n_actions)

    def forward(self, x):
        return self.out(F.relu(self.fc(x)))


def double_dqn_loss(online, target, batch, gamma=0.99):
    state, action, reward, next_state, done = batch
    q = online(state).gather(1, action.unsqueeze(1)).squeeze(1)
    next_action = online(next_state).argmax(1, keepdim=True)
    with torch.no_grad():
        next_q = target(next_state).gather(1, next_action).squeeze(1)
    return F.smooth_l1_loss(q, reward + gamma * (1 - done) * next_q)


def run():
    torch.manual_seed(0)
    online, target = NoisyQNetwork(), NoisyQNetwork()
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-3)
    batch = (torch.randn(3, 4), torch.tensor([0, 1, 0]), torch.ones(3), torch.randn(3, 4), torch.zeros(3))
    loss = double_dqn_loss(online, target, batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
