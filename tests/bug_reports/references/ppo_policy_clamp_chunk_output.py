import torch
import torch.nn as nn

torch.manual_seed(0)


class StateDependentPolicy(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, 2 * action_dim))

    def forward(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        log_stds = log_stds.clamp(-20, 2)
        return means + log_stds.exp() * torch.ones_like(means)


policy = StateDependentPolicy(3, 2)
policy(torch.randn(4, 3)).pow(2).sum().backward()
grads = [p.grad for p in policy.parameters()]
