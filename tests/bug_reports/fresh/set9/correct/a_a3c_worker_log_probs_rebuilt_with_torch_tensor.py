"""An A3C worker for a continuous-action task (DeepReinforcementLearning_Pytorch's
Actor_Critic/A3C/worker.py): the log-probabilities of the actions taken are kept in the
trajectory memory, and `calculate_loss` gathers them with
`torch.tensor([t[1] for t in self.memory])`. `torch.tensor` copies the values and drops the
graph, so `-advantage * log_probs` is a constant: the policy loss still has a graph through the
entropy term, backward() runs, and the actor is trained on the entropy bonus alone (no error,
only a UserWarning about converting a tensor that requires grad to a scalar).
Source: https://github.com/Quantum-Cheese/DeepReinforcementLearning_Pytorch/issues/1 ("Lose of
gradient in log_probs": "`log_probs = torch.tensor([t[1] for t in self.memory], dtype=torch.float)`
I think this will lose the gradient of log_probs"; the log-probabilities must stay in the graph,
`torch.stack` of the stored tensors).
expect: silent"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, state_size, action_size):
        super().__init__()
        self.body = nn.Linear(state_size, 16)
        self.mu = nn.Linear(16, action_size)
        self.log_sigma = nn.Linear(16, action_size)

    def forward(self, state):
        h = torch.tanh(self.body(state))
        return self.mu(h), F.softplus(self.log_sigma(h)) + 1e-3

    def act(self, state):
        mu, sigma = self(state)
        dist = Normal(mu, sigma)
        action = dist.sample()
        return action, dist.log_prob(action).sum()


class Worker:
    def __init__(self, gamma=0.9):
        self.policy = Actor(3, 1)
        self.value = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.value_optimizer = torch.optim.Adam(self.value.parameters(), lr=1e-2)
        self.gamma = gamma
        self.memory = []

    def calculate_loss(self):
        states = torch.stack([t[0] for t in self.memory])
        log_probs = torch.stack([t[1] for t in self.memory])
        rewards = [t[2] for t in self.memory]
        returns = []
        for i in range(len(rewards)):
            returns.append(sum(self.gamma ** k * r for k, r in enumerate(rewards[i:])))
        returns = torch.tensor(returns, dtype=torch.float).view(-1, 1)
        V = self.value(states)
        value_loss = F.mse_loss(returns, V)
        mu, sigma = self.policy(states)
        entropy = 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(Normal(mu, sigma).scale)
        advantage = (returns - V).detach()
        policy_loss = -advantage * log_probs.view(-1, 1)
        policy_loss = (policy_loss - 0.005 * entropy).mean()
        return value_loss, policy_loss

    def update(self):
        value_loss, policy_loss = self.calculate_loss()
        self.value_optimizer.zero_grad()
        value_loss.backward()
        self.value_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        self.memory = []
        return policy_loss.detach()


def step(state, action):
    reward = -float((state[0] - action[0]) ** 2)
    return torch.roll(state, 1) * 0.9 + 0.1, reward


worker = Worker()
policy_losses = []
for episode in range(4):
    state = torch.linspace(-1.0, 1.0, 3) * (episode + 1) / 4
    for t in range(6):
        action, log_prob = worker.policy.act(state)
        next_state, reward = step(state, action)
        worker.memory.append([state, log_prob, reward])
        state = next_state
    policy_losses.append(worker.update())
result = {"policy_losses": policy_losses,
          "policy": [p.detach().clone() for p in worker.policy.parameters()],
          "value": [p.detach().clone() for p in worker.value.parameters()]}
