"""A REINFORCE agent whose update sums `reward * log_prob.item()` over the episode into `total`
(from 0.0), rebuilds the loss with `torch.tensor(total, requires_grad=True)`, scales the copy
(`loss = -loss / len(rewards)`) and backpropagates it: the copy is a fresh leaf, the policy gets
no gradient and the step changes nothing."""
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
        total = 0.0
        for state, action, reward in zip(states, actions, rewards):
            log_prob = self.policy(state)[action]
            total += reward * log_prob.item()
        loss = torch.tensor(total, requires_grad=True)
        loss = -loss / len(rewards)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def bug_shows():
    torch.manual_seed(0)
    agent = Agent()
    before = [p.detach().clone() for p in agent.policy.parameters()]
    agent.update([torch.rand(4) for _ in range(3)], [0, 1, 0], [1.0, 0.5, 2.0])
    return all(torch.equal(b, p) for b, p in zip(before, agent.policy.parameters()))
