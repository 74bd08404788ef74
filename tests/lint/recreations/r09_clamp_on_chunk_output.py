"""`log_stds.clamp_()` on one of the views `chunk` returned.
Source: https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13"""
import torch
import torch.nn as nn


def build_mlp(input_dim, output_dim, hidden=16):
    layers = [nn.Linear(input_dim, hidden), nn.Tanh(), nn.Linear(hidden, output_dim)]
    return nn.Sequential(*layers)


class StateDependentPolicy(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = build_mlp(state_dim, 2 * action_dim)

    def forward(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        log_stds.clamp_(-20, 2)  # expect: ADL015
        return means + log_stds.exp()


def run():
    StateDependentPolicy(3, 2)(torch.randn(4, 3)).sum().backward()
