"""A latent SAC agent's Gaussian policy: the network's output is cut in two
with `torch.chunk`, and the log-std half is clamped in place before the
reparameterised sample.  `chunk` returns several views of one tensor, and
autograd refuses an in-place write to any of them while gradients are on
("Output 1 of Split is a view and is being modified inplace ... a function
that returns multiple views"), so the first actor update fails; the critic's
target and exploration call the same method under `torch.no_grad()` and pass.
The network comes from a factory and `.apply(initialize_weight)` (the original
imports `build_mlp` from the project's `slac/utils.py` and is a
`torch.jit.ScriptModule`, which fails the same way).
Source: https://github.com/ku2482/slac.pytorch (slac/network/sac.py, GaussianPolicy.sample)"""
import math

import torch
from torch import nn


def build_mlp(input_dim, output_dim, hidden_units=(64, 64), hidden_activation=nn.Tanh()):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(hidden_activation)
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)


def initialize_weight(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight, gain=1.0)
        nn.init.constant_(m.bias, 0)


def reparameterize(mean, log_std):
    noise = torch.randn_like(mean)
    action = torch.tanh(mean + noise * log_std.exp())
    gaussian_log_prob = (-0.5 * noise.pow(2) - log_std).sum(dim=-1, keepdim=True) \
        - 0.5 * math.log(2 * math.pi) * log_std.size(-1)
    return action, gaussian_log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


class GaussianPolicy(nn.Module):
    def __init__(self, action_dim, feature_dim, hidden_units=(256, 256)):
        super().__init__()
        self.net = build_mlp(
            input_dim=feature_dim,
            output_dim=2 * action_dim,
            hidden_units=hidden_units,
            hidden_activation=nn.ReLU(inplace=True),
        ).apply(initialize_weight)

    def forward(self, feature_action):
        means = torch.chunk(self.net(feature_action), 2, dim=-1)[0]
        return torch.tanh(means)

    def sample(self, feature_action):
        mean, log_std = torch.chunk(self.net(feature_action), 2, dim=-1)
        action, log_pi = reparameterize(mean, log_std.clamp_(-20, 2))  # expect: ADL015
        return action, log_pi


def update_actor(actor, optim_actor, critic, z, feature_action, alpha):
    action, log_pi = actor.sample(feature_action)
    q = critic(torch.cat([z, action], dim=-1))
    loss_actor = -torch.mean(q - alpha * log_pi)
    optim_actor.zero_grad()
    loss_actor.backward()
    optim_actor.step()


def run():
    torch.manual_seed(0)
    actor = GaussianPolicy(action_dim=2, feature_dim=6, hidden_units=(16, 16))
    critic = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    optim_actor = torch.optim.Adam(actor.parameters(), lr=3e-4)
    feature_action, z = torch.randn(8, 6), torch.randn(8, 3)
    with torch.no_grad():
        actor.sample(feature_action)  # the critic's target: no gradients, no error
    update_actor(actor, optim_actor, critic, z, feature_action, alpha=0.1)
