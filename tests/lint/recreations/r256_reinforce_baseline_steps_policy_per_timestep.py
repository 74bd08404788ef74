"""A REINFORCE-with-baseline agent updates step by step after each
episode: for every time step it computes `delta = G - V` with the value
network, updates the value network, then the policy with
`policy_loss_theta = -log_act_prob[i] * delta`,
`policy_loss_theta.backward(retain_graph=True)` and `optimizer_theta.step()`.
The log-probabilities were all computed by the policy during the episode;
from the second time step on, the backward goes through the policy's
graph, whose weights the first `optimizer_theta.step()` changed in place
("one of the variables needed for gradient computation has been modified by
an inplace operation").  The fix sums the per-step losses and steps once
per episode.
Buggy line: `optimizer_theta.step()` in `finish_episode`, inside the loop
over time steps.
Expected finding: ADL003 there.
Source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/issues/37"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, n_states=4, n_actions=2):
        super().__init__()
        self.fc1 = nn.Linear(n_states, 16)
        self.fc2 = nn.Linear(16, n_actions)
        self.reward = []

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


class StateValue(nn.Module):
    def __init__(self, n_states=4):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(n_states, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.fc(x)


policy = Policy()
s_value_func = StateValue()
optimizer_theta = torch.optim.Adam(policy.parameters(), lr=1e-3)
optimizer_w = torch.optim.Adam(s_value_func.parameters(), lr=1e-3)
gamma = 0.99


def finish_episode(state_sequence, log_act_prob):
    R = 0
    Gt = []
    for r in policy.reward[::-1]:
        R = r + gamma * R
        Gt.insert(0, R)
    for i in range(len(Gt)):
        G = Gt[i]
        V = s_value_func(state_sequence[i])
        delta = G - V

        optimizer_w.zero_grad()
        value_loss = delta.pow(2).mean()
        value_loss.backward(retain_graph=True)
        optimizer_w.step()

        optimizer_theta.zero_grad()
        policy_loss_theta = -(log_act_prob[i] * delta.detach()).sum()
        policy_loss_theta.backward(retain_graph=True)
        optimizer_theta.step()  # expect: ADL003
    del policy.reward[:]


def run_episode(steps=3):
    state_sequence, log_act_prob = [], []
    state = torch.randn(4)
    for _ in range(steps):
        state_sequence.append(state)
        m = Categorical(policy(state))
        action = m.sample()
        log_act_prob.append(m.log_prob(action))
        policy.reward.append(1.0)
        state = state + 0.1 * torch.randn(4)
    finish_episode(state_sequence, log_act_prob)


def run():
    torch.manual_seed(0)
    run_episode()
