"""A near twin that stays silent: a constant baseline is rebuilt from `.item()` values summed
from 0.0 (`torch.tensor(baseline, requires_grad=True)`), but the name is then rebound to the
baseline plus the policy's own loss (`loss = loss + policy_loss`), which carries the graph: the
backward reaches the policy and the step trains it."""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, state):
        return torch.log_softmax(self.net(state), dim=-1)


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)

    def update(self, states, actions, rewards):
        baseline = 0.0
        policy_loss = 0.0
        for state, action, reward in zip(states, actions, rewards):
            log_prob = self.policy(state)[action]
            baseline += reward * log_prob.item()
            policy_loss = policy_loss - reward * log_prob
        loss = torch.tensor(baseline, requires_grad=True)
        loss = loss + policy_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def trains():
    torch.manual_seed(0)
    agent = Agent()
    before = [p.detach().clone() for p in agent.policy.parameters()]
    agent.update([torch.rand(4) for _ in range(3)], [0, 1, 0], [1.0, 0.5, 2.0])
    return not all(torch.equal(b, p) for b, p in zip(before, agent.policy.parameters()))
