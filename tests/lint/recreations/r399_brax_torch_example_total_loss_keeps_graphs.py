"""Brax's PyTorch training example summed each iteration's loss tensor into
`total_loss` (`total_loss += loss`) to report the mean: `total_loss` stays a
graph tensor reaching every iteration's graph, which is a memory leak the
PyTorch FAQ describes.  The fix accumulates `float(loss)` / `loss.item()`.
Buggy line: `total_loss += loss` in `train`.
Source: https://github.com/google/brax/pull/152"""
import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self, obs_size=4, act_size=2):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(obs_size, 16), nn.Tanh(), nn.Linear(16, act_size * 2))
        self.value = nn.Sequential(nn.Linear(obs_size, 16), nn.Tanh(), nn.Linear(16, 1))

    def loss(self, observation, reward):
        logits = self.policy(observation)
        values = self.value(observation).squeeze(-1)
        return ((reward - values) ** 2).mean() + 1e-3 * logits.pow(2).mean()


def train(agent, rollouts, learning_rate=3e-4):
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate)
    total_loss = 0
    for observation, reward in rollouts:
        loss = agent.loss(observation, reward)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss  # expect: ADL023
    return total_loss / len(rollouts)


def bug_shows():
    """The reported mean is a graph tensor: it keeps every iteration's graph."""
    torch.manual_seed(0)
    rollouts = [(torch.randn(5, 4), torch.randn(5)) for _ in range(3)]
    return train(Agent(), rollouts).grad_fn is not None
