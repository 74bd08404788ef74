"""The PyTorch DQN of "Deep Learning from Scratch 4" means to cut the target
network out of the graph with `next_q.detach()`, written as a statement:
`detach()` returns a new tensor and leaves `next_q` as it was, so the TD
target keeps the target network's graph and every backward also computes
(and stores) gradients for the target network's parameters.  Nothing
raises.  The fix is `next_q = next_q.detach()`.
Buggy line: `next_q.detach()` in `DQNAgent.update`.
Expected finding: ADL021 (an out-of-place result thrown away).
Source: https://github.com/oreilly-japan/deep-learning-from-scratch-4/issues/13"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class QNet(nn.Module):
    def __init__(self, action_size):
        super().__init__()
        self.l1 = nn.Linear(4, 16)
        self.l2 = nn.Linear(16, action_size)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class DQNAgent:
    def __init__(self, action_size=2, gamma=0.98, lr=0.0005):
        self.gamma = gamma
        self.qnet = QNet(action_size)
        self.qnet_target = QNet(action_size)
        self.optimizer = torch.optim.Adam(self.qnet.parameters(), lr=lr)

    def sync_qnet(self):
        self.qnet_target = copy.deepcopy(self.qnet)

    def update(self, state, action, reward, next_state, done):
        qs = self.qnet(state)
        q = qs[torch.arange(len(action)), action]
        next_qs = self.qnet_target(next_state)
        next_q = next_qs.max(1)[0]
        next_q.detach()  # expect: ADL021
        target = reward + (1 - done) * self.gamma * next_q
        loss = F.mse_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def bug_shows():
    """The target network receives gradients from the TD loss."""
    torch.manual_seed(0)
    agent = DQNAgent()
    agent.sync_qnet()
    state, next_state = torch.randn(3, 4), torch.randn(3, 4)
    action, reward, done = torch.tensor([0, 1, 1]), torch.ones(3), torch.zeros(3)
    agent.update(state, action, reward, next_state, done)
    return any(p.grad is not None for p in agent.qnet_target.parameters())
