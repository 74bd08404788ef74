"""AgileRL's DQN `learn` builds the double-DQN target from the online
network's greedy action on the next states and the target network's value,
`q_target = rewards + gamma * q_next * (1 - dones)`, and takes the loss
against it without `.detach()`: where the next-state value comes from the
online network (`self.actor(next_states)`), the loss's gradient also flows
through the target, and the online network is trained towards a moving
target (a full gradient instead of the semi-gradient TD step).  Nothing
raises.  The fix detaches the target.
Buggy line: `loss = self.criterion(q_expected, q_target)` in `DQN.learn`.
Source: https://github.com/AgileRL/AgileRL/pull/63"""
import copy

import torch
import torch.nn as nn


class DQN:
    def __init__(self, detach_target=False, gamma=0.9):
        torch.manual_seed(0)
        self.actor = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.actor_target = copy.deepcopy(self.actor)
        self.optimizer = torch.optim.SGD(self.actor.parameters(), lr=0.1)
        self.criterion = nn.MSELoss()
        self.gamma = gamma
        self.detach_target = detach_target

    def learn(self, states, actions, rewards, next_states, dones):
        q_idx = self.actor_target(next_states).argmax(dim=1, keepdim=True)
        q_next = self.actor(next_states).gather(1, q_idx)
        q_target = rewards + self.gamma * q_next * (1 - dones)
        if self.detach_target:
            q_target = q_target.detach()
        q_expected = self.actor(states).gather(1, actions.long())
        loss = self.criterion(q_expected, q_target)  # expect: ADL032
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return [p.detach().clone() for p in self.actor.parameters()]


def bug_shows():
    """One update with the target kept in the graph differs from the TD update."""
    torch.manual_seed(1)
    batch = (torch.randn(6, 4), torch.randint(0, 3, (6, 1)), torch.randn(6, 1), torch.randn(6, 4),
             torch.zeros(6, 1))
    buggy = DQN(detach_target=False).learn(*batch)
    correct = DQN(detach_target=True).learn(*batch)
    return any(not torch.equal(b, c) for b, c in zip(buggy, correct))
