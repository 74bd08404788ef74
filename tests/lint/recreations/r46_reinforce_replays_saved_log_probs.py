"""REINFORCE keeps each step's log-probability on the policy module
(`policy.saved_log_probs`); calling `finish_episode()` more than once to
replay sampled experiences backpropagates a second time through the graphs
the first call freed.
Source: https://github.com/pytorch/examples/issues/151"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma = 0.99


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(batch_size):
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    idx = np.random.choice(len(returns), batch_size)
    policy_loss = [-policy.saved_log_probs[i] * returns[i] for i in idx]
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()  # missed: ADL019
    optimizer.step()


def main(episodes=1, steps=6, replays=2):
    rng = np.random.default_rng(0)
    for i_episode in range(episodes):
        state = rng.standard_normal(4)
        for t in range(steps):
            action = select_action(state)
            state = rng.standard_normal(4)
            policy.rewards.append(float(action))
        for _ in range(replays):
            finish_episode(batch_size=4)
        del policy.rewards[:]
        del policy.saved_log_probs[:]


def run():
    torch.manual_seed(0)
    np.random.seed(0)
    main()
